import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, redisAnswers } from './private-redis.js';

const REDIS_SERVER = process.env.TEST_REDIS_SERVER ?? '/usr/bin/redis-server';
const OPENSSL = '/usr/bin/openssl';

/** Debian's PostgreSQL binaries (initdb, pg_ctl), the newest version installed; undefined when none. */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')) && existsSync(join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

/** The OS user that runs the private servers: initdb refuses root, so root hands them to `postgres`. */
function serverUser(): { uid: number; gid: number; name: string } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid, name: 'postgres' };
}

/** Why the TLS services cannot be started on this machine, or undefined when they can. */
export function tlsServicesMissing(): string | undefined {
  if (!existsSync(OPENSSL)) return `${OPENSSL} is not installed`;
  if (!existsSync(REDIS_SERVER)) return `${REDIS_SERVER} is not installed`;
  if (!postgresBinDir()) return 'no PostgreSQL server binaries under /usr/lib/postgresql/*/bin';
  if (process.getuid?.() === 0) {
    try {
      serverUser();
    } catch {
      return 'running as root and there is no postgres user to run initdb as';
    }
  }
  return undefined;
}

/**
 * A throwaway CA and a server certificate it signed, for 127.0.0.1 and localhost, in a fresh
 * temporary folder; readable by the servers' user.
 */
export class TestCertificates {
  private constructor(readonly dir: string) {}

  get caFile(): string {
    return join(this.dir, 'ca.crt');
  }
  get certFile(): string {
    return join(this.dir, 'server.crt');
  }
  get keyFile(): string {
    return join(this.dir, 'server.key');
  }

  static create(): TestCertificates {
    const dir = mkdtempSync(join(tmpdir(), 'evp-tls-'));
    const certs = new TestCertificates(dir);
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    const run = (args: string[]): void => {
      execFileSync(OPENSSL, args, { cwd: dir, stdio: 'ignore' });
    };
    run(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=evp test CA']);
    run(['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost']);
    writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
    run([
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      'san.ext',
      '-out',
      'server.crt',
    ]);
    // PostgreSQL refuses a key file others may read
    chmodSync(certs.keyFile, 0o600);
    const user = serverUser();
    if (user) {
      chmodSync(dir, 0o755);
      chownSync(certs.keyFile, user.uid, user.gid);
    }
    return certs;
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * A PostgreSQL server of the test's own on its own port, TLS with the given certificate, and a
 * pg_hba.conf that accepts TCP connections over TLS only (`hostssl`): a plain one is refused.
 */
export class TlsPostgres {
  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly bin: string,
  ) {}

  /** postgres://postgres@127.0.0.1:<port>/postgres (trust authentication, TLS required) */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async start(certs: TestCertificates): Promise<TlsPostgres> {
    const bin = postgresBinDir();
    if (!bin) throw new Error('no PostgreSQL binaries');
    const dir = mkdtempSync(join(tmpdir(), 'evp-pg-'));
    const user = serverUser();
    if (user) chownSync(dir, user.uid, user.gid);
    const server = new TlsPostgres(await freePort(), dir, bin);
    try {
      server.initAndStart(certs);
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
    return server;
  }

  private initAndStart(certs: TestCertificates): void {
    const { bin, dir } = this;
    const data = join(dir, 'data');
    this.asServerUser(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    const conf = [
      `port = ${this.port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      'ssl = on',
      `ssl_cert_file = '${certs.certFile}'`,
      `ssl_key_file = '${certs.keyFile}'`,
      'fsync = off',
      'synchronous_commit = off',
      'full_page_writes = off',
      'max_connections = 50',
    ];
    writeFileSync(join(data, 'postgresql.auto.conf'), `${conf.join('\n')}\n`);
    writeFileSync(join(data, 'pg_hba.conf'), 'local all all trust\nhostssl all all 127.0.0.1/32 trust\n');
    this.asServerUser(join(bin, 'pg_ctl'), ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '20', 'start']);
  }

  /** Stops the server at once and removes its files. */
  stop(): void {
    try {
      this.asServerUser(join(this.bin, 'pg_ctl'), ['-D', join(this.dir, 'data'), '-m', 'immediate', '-w', 'stop']);
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }

  /** A client of the test's own, over TLS checked against the CA. */
  async client(ca: string): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.url, ssl: { ca }, connectionTimeoutMillis: 5000 });
    await client.connect();
    return client;
  }

  private asServerUser(file: string, args: string[]): void {
    const user = serverUser();
    const [cmd, argv] = user ? ['runuser', ['-u', user.name, '--', file, ...args]] : [file, args];
    execFileSync(cmd, argv, { stdio: 'ignore', cwd: this.dir });
  }
}

/** A redis-server of the test's own that speaks TLS only (no plain port), clients not asked for certificates. */
export class TlsRedis {
  private constructor(
    readonly port: number,
    private readonly child: ChildProcess,
  ) {}

  get url(): string {
    return `rediss://127.0.0.1:${this.port}`;
  }

  static async start(certs: TestCertificates, ca: string): Promise<TlsRedis> {
    const port = await freePort();
    const args = ['--port', '0', '--tls-port', String(port), '--bind', '127.0.0.1'];
    args.push('--tls-cert-file', certs.certFile, '--tls-key-file', certs.keyFile, '--tls-ca-cert-file', certs.caFile);
    args.push('--tls-auth-clients', 'no', '--save', '', '--appendonly', 'no');
    const child = spawn(REDIS_SERVER, args, { stdio: 'ignore' });
    child.on('error', () => undefined);
    const redis = new TlsRedis(port, child);
    await redisAnswers(redis.url, `redis-server with TLS on port ${port} answers`, { ca });
    return redis;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGKILL');
    await exited;
  }
}
