import { connect, type Socket } from 'node:net';

/** One command a Redis server reported to MONITOR: its name (lower case) and its arguments. */
export interface MonitoredCommand {
  readonly name: string;
  readonly args: readonly string[];
}

export interface RedisMonitor {
  readonly commands: readonly MonitoredCommand[];
  close(): void;
}

/**
 * Watches every command a Redis server runs, over a socket of its own. ioredis's monitor mode
 * is not used: it takes a monitor line that arrives in the same read as the answer to MONITOR
 * for the answer to no command and fails ("Command queue state error"), which a busy server in
 * CI does now and then.
 */
export async function monitorRedis(url: string): Promise<RedisMonitor> {
  const target = new URL(url);
  const socket: Socket = connect({ host: target.hostname || '127.0.0.1', port: Number(target.port || 6379) });
  const commands: MonitoredCommand[] = [];
  let buffered = '';
  let started = false;
  await new Promise<void>((resolve, reject) => {
    socket.setEncoding('latin1');
    socket.once('error', reject);
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      let end = buffered.indexOf('\r\n');
      while (end >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        end = buffered.indexOf('\r\n');
        if (line.startsWith('-')) {
          reject(new Error(`MONITOR refused: ${line.slice(1)}`));
          continue;
        }
        if (!started) {
          if (line === '+OK') {
            started = true;
            resolve();
          }
          continue;
        }
        const command = parseMonitorLine(line);
        if (command) commands.push(command);
      }
    });
    socket.once('connect', () => {
      const password = decodeURIComponent(target.password);
      if (password !== '') socket.write(`AUTH ${password}\r\n`);
      socket.write('MONITOR\r\n');
    });
  });
  socket.on('error', () => undefined);
  return {
    commands,
    close: () => socket.destroy(),
  };
}

/**
 * A MONITOR line: `+<time> [<db> <client>] "<name>" "<arg>" ...`, each argument quoted with
 * backslash escapes (\" \\ \n \r \t \a \b and \xHH).
 */
export function parseMonitorLine(line: string): MonitoredCommand | undefined {
  const open = line.indexOf('] ');
  if (!line.startsWith('+') || open < 0) return undefined;
  const words: string[] = [];
  let i = open + 2;
  while (i < line.length) {
    if (line[i] !== '"') {
      i++;
      continue;
    }
    i++;
    let word = '';
    while (i < line.length && line[i] !== '"') {
      const ch = line[i] ?? '';
      if (ch !== '\\') {
        word += ch;
        i++;
        continue;
      }
      const next = line[i + 1] ?? '';
      if (next === 'x') {
        word += String.fromCharCode(parseInt(line.slice(i + 2, i + 4), 16));
        i += 4;
        continue;
      }
      word += ({ n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b' } as Record<string, string>)[next] ?? next;
      i += 2;
    }
    words.push(Buffer.from(word, 'latin1').toString('utf8'));
    i++;
  }
  const [name, ...args] = words;
  return name === undefined ? undefined : { name: name.toLowerCase(), args };
}
