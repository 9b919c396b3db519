import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../config/index.js';
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
    expect(c.database).to.deep.equal({ kind: 'sqlite', file: './data/platform.sqlite' });
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
    expect(c.database).to.deep.equal({ kind: 'postgresql', url: 'postgres://u@db:5432/x', schema: 'public' });
    expect(c.PORT).to.equal(8080);
    expect(c.LEASE_TTL_MS).to.equal(9000);
  });

  it('names the variable of a bad value', () => {
    expect(configError({ PORT: 'eighty' }).variable).to.equal('PORT');
    expect(configError({ PORT: '70000' }).message).to.match(/^invalid setting PORT: .*\(got "70000"\)/);
    expect(configError({ PROCESS_ROLE: 'boss' }).variable).to.equal('PROCESS_ROLE');
    expect(configError({ DATABASE_URL: 'mysql://x' }).variable).to.equal('DATABASE_URL');
    expect(configError({ OCPI_PARTY_ID: 'TOOLONG' }).variable).to.equal('OCPI_PARTY_ID');
    expect(configError({ REDIS_URL: 'redis://r', DATABASE_URL: 'sqlite:x.db' }).variable).to.equal('DATABASE_URL');
  });

  it('refuses production without CSMS_API_KEY', () => {
    expect(configError({ NODE_ENV: 'production' }).variable).to.equal('CSMS_API_KEY');
    expect(loadConfig({ NODE_ENV: 'production', CSMS_API_KEY: 'k'.repeat(32) }).NODE_ENV).to.equal('production');
  });

  it('is documented: README.md and docs/CONFIGURATION.md carry the table generated from the schema', () => {
    for (const file of ['README.md', 'docs/CONFIGURATION.md']) {
      const doc = readFileSync(resolve(import.meta.dirname, '../../..', file), 'utf8');
      expect(doc, file).to.contain(settingsTable());
    }
  });
});
