import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect } from 'chai';

const SCRIPTS = resolve(import.meta.dirname, '../../scripts');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `node dist/scripts/<name>.js ...args` in `cwd`, with no platform settings in its environment. */
function run(name: string, args: string[], cwd: string): Promise<Run> {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '', HOME: cwd };
  return new Promise((done) => {
    execFile(
      process.execPath,
      [join(SCRIPTS, `${name}.js`), ...args],
      { cwd, env, timeout: 30_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

/**
 * The scripts operators and developers run by hand (README, docs/PERFORMANCE.md): `--help` shows
 * the usage and does nothing else, and a mistyped option or a bad number is refused at once with
 * one line and exit code 2, never a stack trace and never a run on the defaults.
 */
describe('scripts: command lines', function () {
  this.timeout(120_000);
  const scripts = [
    'load-test',
    'bench-pricing',
    'bench-fleet',
    'bench-ask',
    'bench-start',
    'bench-disconnect',
    'bench-turns',
    'ocpi-bench',
    'chaos',
    'price-cdr',
    'migrate',
    'settings-table',
    // the developer's: --help must not run the suites, start tsc --watch or rewrite generated files
    'run-tests',
    'test-watch',
    'generate-ocpp-types',
  ];
  let cwd: string;

  beforeEach(() => {
    cwd = mkdtempSync(join(tmpdir(), 'evp-cli-'));
  });
  afterEach(() => rmSync(cwd, { recursive: true, force: true }));

  it('--help prints the usage, exits 0 and leaves nothing behind', async () => {
    for (const name of scripts) {
      const r = await run(name, ['--help'], cwd);
      expect(r.code, `${name}: ${r.stderr}`).to.equal(0);
      expect(r.stdout, name).to.match(new RegExp(`^usage: node dist/scripts/${name}\\.js`));
      expect(r.stdout, name).to.include('-h, --help');
      // migrate, above all, must not have opened (and so created) the embedded database
      expect(readdirSync(cwd), name).to.deep.equal([]);
    }
  });

  it('an unknown option is refused with one line naming it and exit code 2', async () => {
    for (const name of scripts) {
      const r = await run(name, ['--chargres', '10'], cwd);
      expect(r.code, name).to.equal(2);
      expect(r.stderr, name).to.include("Unknown option '--chargres'");
      expect(r.stderr, name).to.include(`Try 'node dist/scripts/${name}.js --help'`);
      expect(r.stderr, name).not.to.match(/\n\s+at /);
      expect(readdirSync(cwd), name).to.deep.equal([]);
    }
  });

  it('a number that is not one, or out of range, is named before anything starts', async () => {
    const cases: Array<[string, string[], string]> = [
      ['load-test', ['--compare', '--runs', 'three'], '--runs must be an integer >= 1, not "three"'],
      ['load-test', ['--share-201', '1.5'], '--share-201 must be a number >= 0 and <= 1, not "1.5"'],
      ['load-test', ['--compare', '--in-flight', '500'], '--in-flight must not exceed --chargers'],
      ['bench-pricing', ['--cdrs=0'], '--cdrs must be an integer >= 1, not "0"'],
      ['bench-pricing', ['--batch-size=0'], '--batch-size must be an integer >= 1, not "0"'],
      ['bench-pricing', ['--thread-policy=fast'], 'PRICING_THREAD_POLICY'],
      ['bench-fleet', ['--requests', '2'], '--requests must be an integer >= 5, not "2"'],
      ['ocpi-bench', ['--only=delete'], '--only must be list or put'],
      ['chaos', ['--minutes', '0'], '--minutes must be a number in (0, 120], not "0"'],
      ['price-cdr', [], '--cdr is required'],
      // said what was wrong (was the usage alone)
      ['ocpi-partners', ['--foo'], "ocpi-partners: unknown option '--foo'"],
      ['ocpi-partners', ['frobnicate'], "ocpi-partners: unknown command 'frobnicate'"],
      ['ocpi-partners', ['show'], 'ocpi-partners: show needs its arguments'],
      // an extra argument was dropped and the partner onboarded (exit 0)
      ['ocpi-partners', ['onboard', 'DE', 'ZZ1', 'EMSP', 'extra'], 'ocpi-partners: onboard takes 3 argument(s), not 4'],
      ['run-tests', ['nosuch'], 'unknown suite nosuch'],
    ];
    for (const [name, args, message] of cases) {
      const r = await run(name, args, cwd);
      expect(r.code, `${name} ${args.join(' ')}`).to.equal(2);
      expect(r.stderr, `${name} ${args.join(' ')}`).to.include(message);
      expect(readdirSync(cwd), name).to.deep.equal([]);
    }
  });

  it('price-cdr says so when it prices in UTC for want of a time zone, and refuses to when the tariff reads local time', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'price-cdr-'));
    try {
      const cdr = {
        start_date_time: '2024-05-02T10:00:00Z',
        end_date_time: '2024-05-02T11:00:00Z',
        currency: 'EUR',
        charging_periods: [{ start_date_time: '2024-05-02T10:00:00Z', dimensions: [{ type: 'ENERGY', volume: 2 }] }],
      };
      const tariff = {
        id: 'T',
        currency: 'EUR',
        elements: [{ price_components: [{ type: 'ENERGY', price: 0.3, step_size: 1 }] }],
      };
      writeFileSync(join(dir, 'cdr.json'), JSON.stringify(cdr));
      writeFileSync(join(dir, 'tariff.json'), JSON.stringify(tariff));
      const utc = await run('price-cdr', ['--cdr', 'cdr.json', '--tariff', 'tariff.json', '--totals'], dir);
      expect(utc.code, utc.stderr).to.equal(0);
      expect(utc.stderr).to.include('no --time-zone: priced in UTC');
      const zoned = await run(
        'price-cdr',
        ['--cdr', 'cdr.json', '--tariff', 'tariff.json', '--totals', '--time-zone', 'Europe/Amsterdam'],
        dir,
      );
      expect(zoned.code, zoned.stderr).to.equal(0);
      expect(zoned.stderr).to.equal('');
      // a tariff that reads the wall clock would price in UTC unnoticed: refused without a zone
      const timed = { ...tariff, elements: [{ ...tariff.elements[0], restrictions: { start_time: '18:00' } }] };
      writeFileSync(join(dir, 'timed.json'), JSON.stringify(timed));
      const refused = await run('price-cdr', ['--cdr', 'cdr.json', '--tariff', 'timed.json', '--totals'], dir);
      expect(refused.code).to.equal(2);
      expect(refused.stderr).to.include('give --time-zone');
      expect(refused.stdout).to.equal('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("price-cdr prices a 2.1.1 CDR with its own tariff in its location's time zone", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'price-cdr-'));
    try {
      // 2.1.1 tariff and CDR: 0.50 a kWh from 18:00 local, 0.30 before; 16:30Z is 18:30 in Amsterdam
      const tariff = {
        id: 'T',
        currency: 'EUR',
        elements: [
          { price_components: [{ type: 'ENERGY', price: 0.5, step_size: 1 }], restrictions: { start_time: '18:00' } },
          { price_components: [{ type: 'ENERGY', price: 0.3, step_size: 1 }] },
        ],
        last_updated: '2024-05-01T00:00:00Z',
      };
      const location = { id: 'L1', type: 'ON_STREET', address: 'Main 1', city: 'Amsterdam', country: 'NLD' };
      const cdr = {
        id: 'C1',
        start_date_time: '2024-05-02T16:30:00Z',
        stop_date_time: '2024-05-02T17:30:00Z',
        auth_id: 'NL-ABC-1',
        auth_method: 'WHITELIST',
        location: { ...location, time_zone: 'Europe/Amsterdam' },
        currency: 'EUR',
        tariffs: [tariff],
        charging_periods: [{ start_date_time: '2024-05-02T16:30:00Z', dimensions: [{ type: 'ENERGY', volume: 2 }] }],
        total_cost: 1,
        total_energy: 2,
        total_time: 1,
        last_updated: '2024-05-02T17:31:00Z',
      };
      writeFileSync(join(dir, 'cdr.json'), JSON.stringify(cdr));
      const zoned = await run('price-cdr', ['--cdr', 'cdr.json', '--totals'], dir);
      expect(zoned.code, zoned.stderr).to.equal(0);
      expect(zoned.stderr).to.equal('');
      const priced = JSON.parse(zoned.stdout) as { total_cost: { excl_vat: number }; total_energy: number };
      expect(priced.total_cost.excl_vat).to.equal(1);
      expect(priced.total_energy).to.equal(2);
      // the zone given on the command line wins over the location's
      const utc = await run('price-cdr', ['--cdr', 'cdr.json', '--totals', '--time-zone', 'UTC'], dir);
      expect((JSON.parse(utc.stdout) as { total_cost: { excl_vat: number } }).total_cost.excl_vat).to.equal(0.6);
      // a location without a time_zone names none: a tariff of local hours is refused then
      writeFileSync(join(dir, 'nozone.json'), JSON.stringify({ ...cdr, location }));
      const refused = await run('price-cdr', ['--cdr', 'nozone.json', '--totals'], dir);
      expect(refused.code).to.equal(2);
      expect(refused.stderr).to.include('give --time-zone');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ocpi-partners answers --help with its usage on stdout', async () => {
    const r = await run('ocpi-partners', ['--help'], cwd);
    expect(r.code).to.equal(0);
    expect(r.stdout).to.match(/^usage: ocpi-partners </);
  });
});
