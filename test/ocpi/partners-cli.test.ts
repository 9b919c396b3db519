import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { expect } from 'chai';
import { API_KEY, embeddedTarget, type OcpiTarget } from '../support/ocpi-harness.js';

const CLI = resolve(import.meta.dirname, '../../scripts/ocpi-partners.js');

function run(target: OcpiTarget, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((r) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...process.env, CSMS_URL: `${target.urls[0] ?? ''}/v1`, CSMS_API_KEY: API_KEY } },
      (error, out, err) => r({ code: error ? Number(error.code) : 0, out: String(out), err: String(err) }),
    );
  });
}

describe('scripts/ocpi-partners: partner onboarding from the command line', function () {
  this.timeout(30_000);
  let target: OcpiTarget;
  before(async () => {
    target = await embeddedTarget();
  });
  after(async () => target.stop());

  it('onboards a partner (Token A and versions URL), lists and shows it', async () => {
    const onboarded = await run(target, 'onboard', 'DE', 'CLI', 'CPO');
    expect(onboarded.code, onboarded.err).to.equal(0);
    const created = JSON.parse(onboarded.out) as { id: string; token: string; versions_url: string };
    expect(created.token).to.be.a('string').with.length.greaterThan(20);
    expect(created.versions_url).to.match(/\/ocpi\/emsp\/versions$/);
    const list = JSON.parse((await run(target, 'list')).out) as Array<{ id: string }>;
    expect(list.map((p) => p.id)).to.include(created.id);
    const shown = JSON.parse((await run(target, 'show', created.id)).out) as Record<string, unknown>;
    expect(shown).to.include({ country_code: 'DE', party_id: 'CLI', role: 'CPO', status: 'unregistered' });
  });

  it('prints the refusal and exits 1 on a bad request, 2 on bad usage', async () => {
    const refused = await run(target, 'onboard', 'DE', 'CL', 'CPO');
    expect(refused.code).to.equal(1);
    expect(refused.err).to.include('party_id');
    expect((await run(target, 'onboard', 'DE', 'CLI', 'DRIVER')).code).to.equal(2);
    expect((await run(target, 'pull', 'only-an-id')).code).to.equal(2);
  });

  it('pull, push and unregister name the partner and module; an unregistered partner is refused (409)', async () => {
    const created = JSON.parse((await run(target, 'onboard', 'DE', 'CLX', 'CPO')).out) as { id: string };
    for (const args of [
      ['pull', created.id, 'tariffs'],
      ['push', created.id, 'tokens'],
      ['unregister', created.id],
    ]) {
      const res = await run(target, ...args);
      expect(res.code, args.join(' ')).to.equal(1);
      expect(res.err, args.join(' ')).to.include('not_registered');
    }
    // a module the operation does not know is the service's 422
    const unknown = await run(target, 'pull', created.id, 'commands');
    expect([unknown.code, unknown.err.includes('module')]).to.deep.equal([1, true]);
  });
});
