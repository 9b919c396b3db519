import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect } from 'chai';
import { ConfigError, loadConfig, misspelledSettings } from '../../config/index.js';
import { settingsTable } from '../../scripts/settings-table.js';

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('settings', () => {
  it('gives the embedded mode with no settings at all', () => {
    const c = loadConfig({});
    expect(c.mode).to.equal('embedded');
    expect(c.database).to.deep.equal({ kind: 'sqlite', file: './data/platform.sqlite', exclusive: true });
    expect(c.PORT).to.equal(3000);
    expect(c.publicUrl).to.equal('http://localhost:3000');
    expect(c.PROCESS_ROLE).to.equal('all');
  });

  it('reads cluster settings and converts numbers', () => {
    const c = loadConfig({
      DATABASE_URL: 'postgres://u@db:5432/x',
      REDIS_URL: 'rediss://r:6380',
      PORT: '8080',
      LEASE_TTL_MS: '9000',
    });
    expect(c.mode).to.equal('cluster');
    expect(c.database).to.deep.equal({
      kind: 'postgresql',
      url: 'postgres://u@db:5432/x',
      schema: 'public',
      sslmode: 'disable',
    });
    expect(c.redisTls).to.deep.equal({ rejectUnauthorized: true, checkHostName: true });
    expect(c.PORT).to.equal(8080);
    expect(c.LEASE_TTL_MS).to.equal(9000);
  });

  it('refuses a web or worker process without REDIS_URL: it would run on its own beside the cluster', () => {
    const pg = 'postgres://u@db:5432/x';
    for (const role of ['web', 'worker']) {
      const err = configError({ PROCESS_ROLE: role, DATABASE_URL: pg });
      expect(err.variable).to.equal('REDIS_URL');
      expect(err.message).to.contain(`PROCESS_ROLE=${role} is a cluster process`);
      expect(loadConfig({ PROCESS_ROLE: role, DATABASE_URL: pg, REDIS_URL: 'redis://r' }).mode).to.equal('cluster');
    }
    expect(configError({ PROCESS_ROLE: 'web', REDIS_URL: '' }).variable).to.equal('REDIS_URL');
    expect(loadConfig({ PROCESS_ROLE: 'all', DATABASE_URL: pg }).mode).to.equal('embedded');
  });

  it('names the variable of a bad value', () => {
    expect(configError({ PORT: 'eighty' }).variable).to.equal('PORT');
    expect(configError({ PORT: '70000' }).message).to.match(/^invalid setting PORT: .*\(got "70000"\)/);
    // below the least the log writer holds: was taken and quietly raised to 4 KB
    expect(configError({ LOG_BUFFER_BYTES: '1kb' }).message).to.equal(
      'invalid setting LOG_BUFFER_BYTES: must be at least 4kb (got 1kb)',
    );
    expect(loadConfig({ LOG_BUFFER_BYTES: '4kb' }).LOG_BUFFER_BYTES).to.equal('4kb');
    // a secret is never quoted back; a URL only as scheme and host
    expect(configError({ CSMS_API_KEY: 'hunter2secret' }).message).to.not.contain('hunter2');
    expect(configError({ METRICS_TOKEN: 'short-secret' }).message).to.not.contain('short-secret');
    const url = configError({ DATABASE_URL: 'mysql://admin:pa55word@db.example:3306/x' });
    expect(url.variable).to.equal('DATABASE_URL');
    expect(url.message).to.not.contain('pa55word');
    expect(configError({ PROCESS_ROLE: 'boss' }).variable).to.equal('PROCESS_ROLE');
    expect(configError({ DATABASE_URL: 'mysql://x' }).variable).to.equal('DATABASE_URL');
    expect(configError({ OCPI_PARTY_ID: 'TOOLONG' }).variable).to.equal('OCPI_PARTY_ID');
    expect(configError({ REDIS_URL: 'redis://r', DATABASE_URL: 'sqlite:x.db' }).variable).to.equal('DATABASE_URL');
  });

  it('takes an integer setting in decimal digits only, and timers within what Node can hold', () => {
    // was: PORT=1.5 listened on port 1, 0x50, 8e1 and " 80" on 80
    for (const value of ['1.5', '0x50', '8e1', ' 80', '80 ', '+80'])
      expect(configError({ PORT: value }), value).to.include({ variable: 'PORT' });
    expect(configError({ DATABASE_POOL_MAX: '2.9' }).variable).to.equal('DATABASE_POOL_MAX');
    expect(loadConfig({ PORT: '8080' }).PORT).to.equal(8080);
    // past 2^31-1 ms Node fires a timer at once: every ask failed at once
    expect(configError({ ASK_TIMEOUT_MS: '3000000000' }).variable).to.equal('ASK_TIMEOUT_MS');
    expect(configError({ ACTOR_IDLE_MS: '3000000000' }).variable).to.equal('ACTOR_IDLE_MS');
  });

  describe('TLS to PostgreSQL and Redis', () => {
    const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const pgTls = (env: Record<string, string>) => {
      const db = loadConfig({ DATABASE_URL: 'postgres://u:p@db:5432/x', ...env }).database;
      if (db.kind !== 'postgresql') throw new Error('expected PostgreSQL');
      return db;
    };

    it('reads sslmode as libpq does and gives the drivers the URL without it', () => {
      const req = pgTls({ DATABASE_URL: 'postgres://u:p@db:5432/x?sslmode=require&application_name=evp' });
      expect(req.url).to.equal('postgres://u:p@db:5432/x?application_name=evp');
      expect(req.tls).to.deep.equal({ rejectUnauthorized: false, checkHostName: false });
      expect(pgTls({ DATABASE_URL: 'postgres://db/x?sslmode=verify-ca' }).tls).to.deep.equal({
        rejectUnauthorized: true,
        checkHostName: false,
      });
      const full = pgTls({ DATABASE_URL: 'postgres://db/x?sslmode=verify-full', DATABASE_SSL_CA: PEM });
      expect(full.url).to.equal('postgres://db/x');
      expect(full.tls).to.deep.equal({ ca: PEM, rejectUnauthorized: true, checkHostName: true });
      // require with a CA checks the chain, as libpq does with a root certificate
      expect(pgTls({ DATABASE_URL: 'postgres://db/x?sslmode=require', DATABASE_SSL_CA: PEM }).tls).to.include({
        rejectUnauthorized: true,
        checkHostName: false,
      });
      const plain = pgTls({ DATABASE_URL: 'postgres://db/x?sslmode=disable' });
      expect([plain.sslmode, plain.tls]).to.deep.equal(['disable', undefined]);
    });

    it('turns TLS on without sslmode when a TLS setting is given (Heroku: the URL is not ours to edit)', () => {
      expect(pgTls({ DATABASE_SSL_REJECT_UNAUTHORIZED: 'false' })).to.deep.include({
        sslmode: 'verify-full',
        tls: { rejectUnauthorized: false, checkHostName: true },
      });
      expect(pgTls({ DATABASE_SSL_CA: PEM }).tls).to.deep.equal({
        ca: PEM,
        rejectUnauthorized: true,
        checkHostName: true,
      });
      // checks the URL asks for are not turned off by another setting without a word
      expect(
        configError({ DATABASE_URL: 'postgres://db/x?sslmode=verify-full', DATABASE_SSL_REJECT_UNAUTHORIZED: 'false' })
          .variable,
      ).to.equal('DATABASE_SSL_REJECT_UNAUTHORIZED');
      expect(
        pgTls({ DATABASE_URL: 'postgres://db/x?sslmode=require', DATABASE_SSL_REJECT_UNAUTHORIZED: 'false' }).tls,
      ).to.include({ rejectUnauthorized: false });
    });

    it('takes a CA as PEM text (also with \\n for line breaks) or as a file', () => {
      expect(pgTls({ DATABASE_SSL_CA: PEM.replace(/\n/g, '\\n') }).tls?.ca).to.equal(PEM);
      const dir = mkdtempSync(join(tmpdir(), 'evp-ca-'));
      try {
        writeFileSync(join(dir, 'ca.pem'), PEM);
        expect(pgTls({ DATABASE_SSL_CA: join(dir, 'ca.pem') }).tls?.ca).to.equal(PEM);
        writeFileSync(join(dir, 'empty.pem'), 'nothing');
        expect(
          configError({ DATABASE_URL: 'postgres://db/x', DATABASE_SSL_CA: join(dir, 'empty.pem') }).message,
        ).to.match(/^invalid setting DATABASE_SSL_CA: holds no PEM certificate/);
        expect(
          configError({ DATABASE_URL: 'postgres://db/x', REDIS_URL: 'rediss://r', REDIS_TLS_CA: join(dir, 'no.pem') })
            .message,
        ).to.match(/^invalid setting REDIS_TLS_CA: cannot read/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('refuses what it would not honour, naming the setting', () => {
      const pgUrl = (q: string) => ({ DATABASE_URL: `postgres://db/x?${q}` });
      expect(configError(pgUrl('sslmode=prefer')).message).to.match(
        /^invalid setting DATABASE_URL: sslmode=prefer is not supported/,
      );
      expect(configError(pgUrl('sslmode=no-verify')).variable).to.equal('DATABASE_URL');
      expect(configError(pgUrl('sslrootcert=/ca.pem')).message).to.include('DATABASE_SSL_CA');
      expect(configError({ ...pgUrl('sslmode=disable'), DATABASE_SSL_CA: PEM }).variable).to.equal('DATABASE_SSL_CA');
      expect(configError({ DATABASE_SSL_REJECT_UNAUTHORIZED: 'false' }).variable).to.equal(
        'DATABASE_SSL_REJECT_UNAUTHORIZED',
      );
      expect(
        configError({ DATABASE_SSL_REJECT_UNAUTHORIZED: 'no', DATABASE_URL: 'postgres://db/x' }).variable,
      ).to.equal('DATABASE_SSL_REJECT_UNAUTHORIZED');
      expect(configError({ DATABASE_URL: 'postgres://db/x', SQLITE_LOCKING: 'normal' }).message).to.equal(
        'invalid setting SQLITE_LOCKING: needs a sqlite: DATABASE_URL (PostgreSQL takes its own locks)',
      );
      expect(loadConfig({ DATABASE_URL: 'sqlite:x.db', SQLITE_LOCKING: 'normal' }).database).to.deep.equal({
        kind: 'sqlite',
        file: 'x.db',
        exclusive: false,
      });
      const redis = { DATABASE_URL: 'postgres://db/x', REDIS_URL: 'redis://r:6379' };
      expect(configError({ ...redis, REDIS_TLS_CA: PEM }).message).to.equal(
        'invalid setting REDIS_TLS_CA: needs a rediss:// REDIS_URL',
      );
      expect(configError({ ...redis, REDIS_TLS_REJECT_UNAUTHORIZED: 'false' }).variable).to.equal(
        'REDIS_TLS_REJECT_UNAUTHORIZED',
      );
    });

    it('reads rediss:// with REDIS_TLS_*; redis:// is plain', () => {
      const base = { DATABASE_URL: 'postgres://db/x' };
      expect(loadConfig({ ...base, REDIS_URL: 'redis://r' }).redisTls).to.equal(undefined);
      expect(
        loadConfig({ ...base, REDIS_URL: 'rediss://:pw@r:6380', REDIS_TLS_REJECT_UNAUTHORIZED: 'false' }).redisTls,
      ).to.deep.equal({ rejectUnauthorized: false, checkHostName: true });
      expect(loadConfig({ ...base, REDIS_URL: 'rediss://r', REDIS_TLS_CA: PEM }).redisTls).to.deep.equal({
        ca: PEM,
        rejectUnauthorized: true,
        checkHostName: true,
      });
    });
  });

  it('names the values a setting of a list may take', () => {
    expect(configError({ OCPP_BOOT_POLICY: 'accepted' }).message).to.equal(
      'invalid setting OCPP_BOOT_POLICY: must be one of Accepted, Pending, Rejected (got "accepted")',
    );
    expect(configError({ SQLITE_LOCKING: 'shared' }).message).to.equal(
      'invalid setting SQLITE_LOCKING: must be one of exclusive, normal (got "shared")',
    );
  });

  it('refuses production without CSMS_API_KEY', () => {
    expect(configError({ NODE_ENV: 'production' }).variable).to.equal('CSMS_API_KEY');
    expect(loadConfig({ NODE_ENV: 'production', CSMS_API_KEY: 'k'.repeat(32) }).NODE_ENV).to.equal('production');
  });

  it('finds variables that look like a misspelled setting, and leaves the rest of an environment alone', () => {
    const env = {
      PROCES_ROLE: 'web', // one letter short
      DATABSE_URL: 'postgres://u@db/x', // two letters swapped
      OCPP_HEARTBEAT_S: '60', // our prefix, no setting
      log_level: 'debug', // the wrong case
      LEASE_TTL: '3000', // a setting without its unit, three edits from LEASE_TTL_MS
      REDIS_URL: 'redis://r', // settings themselves
      PORT: '3000',
      // the host's and other software's
      HOME: '/root', // two from HOST: too far for a short name
      PATH: '/bin',
      HOSTNAME: 'web.1',
      NODE_OPTIONS: '--max-old-space-size=512',
      NODE_EXTRA_CA_CERTS: '/ca.pem',
      DYNO: 'web.1',
      PGHOST: 'db',
      REDIS_TLS_URL: 'rediss://r', // Heroku Redis, beside REDIS_URL
      CSMS_URL: 'http://localhost:3000/v1', // the scripts' own
      TEST_DATABASE_URL: 'postgres://u@db/t',
      // what Kubernetes sets for a service named redis in the namespace
      REDIS_SERVICE_HOST: '10.0.0.7',
      REDIS_SERVICE_PORT: '6379',
      REDIS_SERVICE_PORT_TCP: '6379',
      REDIS_PORT: 'tcp://10.0.0.7:6379',
      REDIS_PORT_6379_TCP: 'tcp://10.0.0.7:6379',
      REDIS_PORT_6379_TCP_ADDR: '10.0.0.7',
      REDIS_PORT_6379_TCP_PORT: '6379',
      REDIS_PORT_6379_TCP_PROTO: 'tcp',
    };
    expect(misspelledSettings(env)).to.deep.equal([
      { variable: 'DATABSE_URL', didYouMean: 'DATABASE_URL' },
      { variable: 'LEASE_TTL', didYouMean: 'LEASE_TTL_MS' },
      { variable: 'OCPP_HEARTBEAT_S' },
      { variable: 'PROCES_ROLE', didYouMean: 'PROCESS_ROLE' },
      { variable: 'log_level', didYouMean: 'LOG_LEVEL' },
    ]);
  });

  it('is documented: README.md and docs/CONFIGURATION.md carry the table generated from the schema', () => {
    for (const file of ['README.md', 'docs/CONFIGURATION.md']) {
      const doc = readFileSync(resolve(import.meta.dirname, '../../..', file), 'utf8');
      expect(doc, file).to.contain(settingsTable());
    }
  });
});
