import { basename } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';

/**
 * The command line of the scripts under scripts/: one parser, so that every script answers
 * `--help` (or `-h`) with its usage and exits 0 without doing anything else, and refuses an
 * option it does not know, a missing value or a stray argument with one line and exit code 2
 * instead of a stack trace (or, worse, running with its defaults while the option was ignored).
 */

type OptionConfig = NonNullable<ParseArgsConfig['options']>[string];

/** An option as parseArgs takes it, with the line `--help` prints for it. */
export type CliOption = OptionConfig & {
  /** what the option does, for `--help` */
  help: string;
  /** the value's placeholder in `--help` (default N for strings) */
  value?: string;
};

export interface CliSpec<O extends Record<string, CliOption>> {
  /** what the script does, one or two lines */
  summary: string;
  options: O;
  /** the positional arguments' placeholder (`<command> [args]`); none are allowed without it */
  positionals?: string;
  /** lines printed after the options (examples, where figures go) */
  notes?: string;
}

/** The usage text of a script, built from its options. */
function usageOf(script: string, spec: CliSpec<Record<string, CliOption>>): string {
  const rows = Object.entries(spec.options).map(([name, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : ''}--${name}${o.type === 'string' ? ` ${o.value ?? 'N'}` : ''}`;
    const shown = o.default === undefined || o.default === false ? '' : ` (default ${String(o.default)})`;
    return [flag, `${o.help}${o.multiple ? ' (may repeat)' : ''}${shown}`] as const;
  });
  rows.push(['-h, --help', 'this text']);
  const width = Math.max(...rows.map(([flag]) => flag.length)) + 2;
  return [
    `usage: node dist/scripts/${script}.js [options]${spec.positionals ? ` ${spec.positionals}` : ''}`,
    '',
    spec.summary,
    '',
    'options:',
    ...rows.map(([flag, help]) => `  ${flag.padEnd(width)}${help}`),
    ...(spec.notes ? ['', spec.notes] : []),
  ].join('\n');
}

/** The running script's name, as its messages start (`load-test`). */
function scriptName(): string {
  return basename(process.argv[1] ?? 'script', '.js');
}

/** Node's parseArgs errors (ERR_PARSE_ARGS_*): the user's mistake, not the script's. */
function isUsageError(err: unknown): err is Error {
  return err instanceof Error && String((err as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS_');
}

/**
 * The script's options and positionals from `argv` (default: the process's). `--help` prints
 * the usage to stdout and exits 0; a usage error prints its message and a pointer to `--help`
 * to stderr and exits 2.
 */
export function commandLine<const O extends Record<string, CliOption>>(
  spec: CliSpec<O>,
  argv: string[] = process.argv.slice(2),
): ReturnType<typeof parseArgs<{ options: O; allowPositionals: boolean; strict: true }>> {
  const script = scriptName();
  const end = argv.indexOf('--');
  const own = end < 0 ? argv : argv.slice(0, end);
  if (own.includes('--help') || own.includes('-h')) {
    process.stdout.write(`${usageOf(script, spec)}\n`);
    process.exit(0);
  }
  try {
    return parseArgs({
      args: argv,
      options: spec.options,
      allowPositionals: spec.positionals !== undefined,
      strict: true,
    });
  } catch (err) {
    if (!isUsageError(err)) throw err;
    return usageError(err.message);
  }
}

/** Ends the script as a usage error: the message and a pointer to `--help` on stderr, exit code 2. */
export function usageError(message: string): never {
  const script = scriptName();
  process.stderr.write(`${script}: ${message}\nTry 'node dist/scripts/${script}.js --help'.\n`);
  process.exit(2);
}

/**
 * The number a string option holds, or a usage error naming the option when it is not a finite
 * number within [min, max] (or not an integer where one is asked for).
 */
export function numberOption(
  name: string,
  raw: string | undefined,
  limits: { min?: number; max?: number; integer?: boolean } = {},
): number {
  const { min = Number.NEGATIVE_INFINITY, max = Number.POSITIVE_INFINITY, integer = false } = limits;
  const n = raw === undefined || raw.trim() === '' ? Number.NaN : Number(raw);
  if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
    const range = [Number.isFinite(min) ? `>= ${min}` : '', Number.isFinite(max) ? `<= ${max}` : '']
      .filter(Boolean)
      .join(' and ');
    usageError(
      `--${name} must be ${integer ? 'an integer' : 'a number'}${range ? ` ${range}` : ''}, not ${JSON.stringify(raw ?? '')}`,
    );
  }
  return n;
}
