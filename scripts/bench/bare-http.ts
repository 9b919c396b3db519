import { createServer } from 'node:http';

/**
 * Baseline for the start benchmark (bench-start.ts): Node's own HTTP server answering 200 to
 * every request on PORT, the least a process must do before it can answer /readyz.
 */
createServer((_req, res) => res.end('ok')).listen(Number(process.env.PORT));
