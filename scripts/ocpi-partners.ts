/**
 * Partner onboarding from the command line, through the management surface of a running
 * service (the same routes an operator's tools call):
 *
 *   node dist/scripts/ocpi-partners.js onboard DE ABC CPO      -> {id, token (Token A), versions_url}
 *   node dist/scripts/ocpi-partners.js list
 *   node dist/scripts/ocpi-partners.js show <id>
 *   node dist/scripts/ocpi-partners.js register <id> <their versions URL> <their Token A> [2.1.1|2.2.1]
 *   node dist/scripts/ocpi-partners.js rotate <id>
 *   node dist/scripts/ocpi-partners.js unregister <id>
 *   node dist/scripts/ocpi-partners.js force-unregister <id>   (the partner is gone: the link ends here untold)
 *   node dist/scripts/ocpi-partners.js pull <id> <locations|tariffs|sessions|cdrs|tokens>
 *   node dist/scripts/ocpi-partners.js push <id> <locations|tariffs|sessions|cdrs|tokens>
 *   node dist/scripts/ocpi-partners.js pull-locations <id>
 *
 * Settings: CSMS_URL (default http://localhost:$PORT/v1, PORT default 3000) and CSMS_API_KEY.
 * Exit codes: 0 done, 1 the service refused (its answer is printed), 2 usage.
 */

const usage = `usage: ocpi-partners <onboard CC PID ROLE | list | show ID | register ID VERSIONS_URL TOKEN [VERSION] | rotate ID | unregister ID | force-unregister ID | pull ID MODULE | push ID MODULE | pull-locations ID>
  ROLE: CPO or EMSP (the partner's role); ID: the id onboard answers (list shows them)
  settings: CSMS_URL (default http://localhost:$PORT/v1, PORT default 3000), CSMS_API_KEY`;

async function call(method: string, path: string, body?: unknown): Promise<number> {
  const base = (process.env.CSMS_URL ?? `http://localhost:${process.env.PORT ?? '3000'}/v1`).replace(/\/+$/, '');
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (process.env.CSMS_API_KEY) headers.Authorization = `Bearer ${process.env.CSMS_API_KEY}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(60_000),
  }).catch((err: unknown) => {
    // "fetch failed" alone does not say where: the URL tried and why (refused, no such host)
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
    throw new Error(`cannot reach the service at ${base} (CSMS_URL)${cause}`);
  });
  const text = await res.text();
  let printed = text;
  try {
    printed = JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    // not JSON: print as it came
  }
  (res.ok ? console.log : console.error)(printed);
  return res.ok ? 0 : 1;
}

/** Each command and the number of arguments it takes. */
const ARITY: Record<string, number> = {
  onboard: 3,
  list: 0,
  show: 1,
  register: 4,
  rotate: 1,
  unregister: 1,
  'force-unregister': 1,
  pull: 2,
  push: 2,
  'pull-locations': 1,
};
const COMMANDS = Object.keys(ARITY);

/**
 * What is wrong with a command's arguments before anything is sent: an option after the command
 * is no argument of it (`show --id X`), nor is one more than it takes (`onboard DE ZZ1 EMSP
 * extra` onboarded the partner, the extra argument dropped).
 */
function refusal(command: string | undefined, args: string[]): string | undefined {
  const takes = command === undefined ? undefined : ARITY[command];
  if (takes !== undefined && args.length > takes) return `${command} takes ${takes} argument(s), not ${args.length}`;
  if (args.some((a) => a.startsWith('--'))) return whatIsWrong(command, args);
  return undefined;
}

/** What is wrong with a command line `main` refused: said before the usage, as the other scripts do. */
function whatIsWrong(command: string | undefined, args: string[]): string {
  if (command === undefined) return 'a command is required';
  if (command.startsWith('-')) return `unknown option '${command}'`;
  if (!COMMANDS.includes(command)) return `unknown command '${command}'`;
  const option = args.find((a) => a.startsWith('--'));
  if (option !== undefined) return `unknown option '${option}'`;
  return `${command} needs its arguments`;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (command === '--help' || command === '-h' || command === 'help') {
    console.log(usage);
    return 0;
  }
  const refused = refusal(command, args);
  if (refused !== undefined) {
    console.error(`ocpi-partners: ${refused}\n${usage}\nTry ocpi-partners --help`);
    return 2;
  }
  switch (command) {
    case 'onboard': {
      const [country_code, party_id, role] = args;
      if (!country_code || !party_id || !role) break;
      if (role !== 'CPO' && role !== 'EMSP') {
        console.error(`ocpi-partners: ROLE must be CPO or EMSP, not ${role}`);
        return 2;
      }
      return call('POST', '/partners', { country_code, party_id, role });
    }
    case 'list':
      return call('GET', '/partners');
    case 'show':
      if (!args[0]) break;
      return call('GET', `/partners/${encodeURIComponent(args[0])}`);
    case 'register': {
      const [id, versions_url, token, version] = args;
      if (!id || !versions_url || !token) break;
      return call('POST', `/partners/${encodeURIComponent(id)}/register`, {
        versions_url,
        token,
        ...(version === undefined ? {} : { version }),
      });
    }
    case 'rotate':
      if (!args[0]) break;
      return call('POST', `/partners/${encodeURIComponent(args[0])}/rotate`);
    case 'unregister':
      if (!args[0]) break;
      return call('POST', `/partners/${encodeURIComponent(args[0])}/unregister`);
    case 'force-unregister':
      if (!args[0]) break;
      return call('POST', `/partners/${encodeURIComponent(args[0])}/unregister?force=true`);
    case 'pull':
    case 'push': {
      const [id, module] = args;
      if (!id || !module) break;
      return call('POST', `/partners/${encodeURIComponent(id)}/${command}/${encodeURIComponent(module)}`);
    }
    case 'pull-locations':
      if (!args[0]) break;
      return call('POST', `/partners/${encodeURIComponent(args[0])}/pull-locations`);
    default:
      break;
  }
  console.error(`ocpi-partners: ${whatIsWrong(command, args)}\n${usage}\nTry ocpi-partners --help`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
