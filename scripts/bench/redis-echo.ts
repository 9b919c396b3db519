import { Redis } from 'ioredis';

/**
 * Baseline peer for the ask benchmark: echoes every message published on `<prefix>:raw:req`
 * to `<prefix>:raw:rep`, the raw Redis pub/sub round trip an ask is compared with.
 */
const [url = 'redis://127.0.0.1:6379', prefix = 'bench'] = process.argv.slice(2);
const sub = new Redis(url);
const pub = new Redis(url);
sub.on('message', (_channel: string, text: string) => {
  void pub.publish(`${prefix}:raw:rep`, text);
});
await sub.subscribe(`${prefix}:raw:req`);
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  sub.disconnect();
  pub.disconnect();
  process.exit(0);
});
