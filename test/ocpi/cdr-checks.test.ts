import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { eventually, eventuallyMatches } from '../support/eventually.js';
import {
  aCdr221,
  aCdr211,
  aConnector,
  aConnector211,
  aLocation,
  aLocation211,
  anEvse211,
  aTariff,
  aTariff221,
  anEvse,
} from '../support/ocpi-builders.js';
import type { OcpiAnswer } from '../support/ocpi-simulator.js';
import { RoamingWorld, type Emsp } from '../support/roaming-world.js';

type Json = Record<string, unknown>;

/**
 * The eMSP re-prices the CDRs partner CPOs post it (docs/TARIFFS.md "Re-pricing received CDRs"):
 * CPO simulators register with the platform as it is started (src/modules.ts), push a tariff and a
 * location to our Receivers, post CDRs, and the operator reads the outcome from /v1/cdr-checks.
 *
 * The tariff: 0.50/kWh from 18:00 to 22:00 local time, else 0.30/kWh, VAT 20%. The CDRs start at
 * 17:30 UTC, 18:30 in Amsterdam: 10 kWh cost 5.00 (6.00 with VAT) there, 3.00 (3.60) read in UTC.
 */
const START = '2026-01-05T17:30:00Z';
const END = '2026-01-05T18:30:00Z';
const PERIODS = [{ start_date_time: START, dimensions: [{ type: 'ENERGY', volume: 10 }] }];
const ELEMENTS_221 = [
  {
    price_components: [{ type: 'ENERGY', price: 0.5, vat: 20, step_size: 1 }],
    restrictions: { start_time: '18:00', end_time: '22:00' },
  },
  { price_components: [{ type: 'ENERGY', price: 0.3, vat: 20, step_size: 1 }] },
];
/** 2.1.1 has no VAT: the same prices, excl_vat only */
const ELEMENTS_211 = ELEMENTS_221.map((e) => ({
  ...e,
  price_components: e.price_components.map(({ type, price, step_size }) => ({ type, price, step_size })),
}));

interface Check {
  country_code: string;
  party_id: string;
  id: string;
  version: string;
  status: 'agrees' | 'disagrees' | 'unpriced';
  tariff_id: string | null;
  theirs: { excl_vat: number; incl_vat?: number };
  ours: { excl_vat: number; incl_vat: number } | null;
  difference: { excl_vat: number; incl_vat?: number } | null;
  reason: string | null;
  checked_at: string;
  tariff: { id: string; source: string } | null;
  time_zone: { zone: string; source: string } | null;
  notes: string[];
  priced: { total_cost: { excl_vat: number }; breakdown: { periods: Array<{ local_time: string }> } } | null;
}

describe('eMSP: CDRs partner CPOs post us are re-priced with their tariff (/v1/cdr-checks)', function () {
  this.timeout(60_000);
  let world: RoamingWorld;
  let cpo221: Emsp;
  let cpo211: Emsp;
  let seq = 0;
  const unique = (prefix: string) => `${prefix}-${++seq}-${Date.now().toString(36)}`.toUpperCase();

  const party = (p: Emsp) => ({ country_code: p.sim.party.country_code, party_id: p.sim.party.party_id });
  const receiver = (p: Emsp) => (p.version === '2.2.1' ? { role: 'RECEIVER' as const } : {});

  /** The partner PUTs one of its objects to our Receiver of `module`. */
  async function push(p: Emsp, module: 'tariffs' | 'locations', id: string, body: Json): Promise<void> {
    const { country_code, party_id } = party(p);
    const answer = await p.sim.call('PUT', module, `/${country_code}/${party_id}/${id}`, body, receiver(p));
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    expect(answer.statusCode, JSON.stringify(answer.body)).to.equal(1000);
  }

  /** The partner POSTs a CDR: answered at once, with the Location to read it back. */
  async function postCdr(p: Emsp, cdr: Json): Promise<OcpiAnswer> {
    const answer = await p.sim.call('POST', 'cdrs', '', cdr, receiver(p));
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    expect(answer.statusCode, JSON.stringify(answer.body)).to.equal(1000);
    const { country_code, party_id } = party(p);
    expect(answer.headers.get('location')).to.match(
      new RegExp(`/ocpi/emsp/${p.version}/cdrs/${country_code}/${party_id}/${String(cdr.id)}$`),
    );
    return answer;
  }

  /** The partner reads a CDR back where our Location said. */
  function readBack(p: Emsp, id: string): Promise<OcpiAnswer> {
    const { country_code, party_id } = party(p);
    return p.sim.call('GET', 'cdrs', `/${country_code}/${party_id}/${id}`, undefined, receiver(p));
  }

  /** The operator reads the check of a CDR once the background re-pricing wrote it. */
  function checkOf(p: Emsp, id: string): Promise<Check> {
    const { country_code, party_id } = party(p);
    return eventually(
      async () => {
        const res = await world.api.request('GET', `/v1/cdr-checks/${country_code}/${party_id}/${id}`);
        if (res.status === 404) return undefined;
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        return res.body as unknown as Check;
      },
      { timeoutMs: 15_000, what: `the check of CDR ${id}` },
    );
  }

  /** The operator reads the check of a CDR until it has `status` (a check run again). */
  function checkUntil(p: Emsp, id: string, status: Check['status']): Promise<Check> {
    const { country_code, party_id } = party(p);
    return eventuallyMatches(
      async () =>
        (await world.api.request('GET', `/v1/cdr-checks/${country_code}/${party_id}/${id}`)).body as unknown as Check,
      (c) => c.status === status,
      15_000,
    );
  }

  const cdr221 = (p: Emsp, over: Json): Json =>
    aCdr221({
      ...party(p),
      id: unique('C'),
      start_date_time: START,
      end_date_time: END,
      charging_periods: PERIODS,
      total_energy: 10,
      total_time: 1,
      last_updated: END,
      ...over,
    });
  const place221 = (id: string) => ({ ...(aCdr221().cdr_location as Json), id });

  const cdr211 = (over: Json, connectorTariff?: string): Json =>
    aCdr211({
      id: unique('C'),
      start_date_time: START,
      stop_date_time: END,
      location: aLocation211({
        id: 'LOC-211',
        evses: [anEvse211({ connectors: [aConnector211(connectorTariff ? { tariff_id: connectorTariff } : {})] })],
      }),
      charging_periods: PERIODS,
      total_energy: 10,
      total_time: 1,
      last_updated: END,
      ...over,
    });

  before(async () => {
    world = await RoamingWorld.start();
    cpo221 = await world.partner('2.2.1', 'CPO');
    cpo211 = await world.partner('2.1.1', 'CPO');
    await push(cpo221, 'tariffs', 'TAR-PEAK', aTariff221({ ...party(cpo221), id: 'TAR-PEAK', elements: ELEMENTS_221 }));
    await push(
      cpo221,
      'locations',
      'LOC-221',
      aLocation({ ...party(cpo221), id: 'LOC-221', time_zone: 'Europe/Amsterdam' }),
    );
    await push(cpo211, 'tariffs', 'TAR-PEAK', aTariff({ id: 'TAR-PEAK', elements: ELEMENTS_211 }));
    await push(cpo211, 'locations', 'LOC-211', aLocation211({ id: 'LOC-211', time_zone: 'Europe/Amsterdam' }));
  });
  after(async () => world.stop());

  it('2.2.1: totals that match the pushed tariff, read in the location time zone, agree', async () => {
    const cdr = cdr221(cpo221, {
      cdr_location: place221('LOC-221'),
      charging_periods: PERIODS.map((p) => ({ ...p, tariff_id: 'TAR-PEAK' })),
      total_cost: { excl_vat: 5, incl_vat: 6 },
    });
    await postCdr(cpo221, cdr);
    const check = await checkOf(cpo221, String(cdr.id));
    expect(check).to.deep.include({
      ...party(cpo221),
      id: cdr.id,
      version: '2.2.1',
      status: 'agrees',
      tariff_id: 'TAR-PEAK',
      theirs: { excl_vat: 5, incl_vat: 6 },
      ours: { excl_vat: 5, incl_vat: 6 },
      difference: { excl_vat: 0, incl_vat: 0 },
      reason: null,
      tariff: { id: 'TAR-PEAK', source: 'charging_period' },
      time_zone: { zone: 'Europe/Amsterdam', source: 'location' },
      notes: [],
    });
    expect(check.priced?.total_cost.excl_vat).to.equal(5);
    expect(check.priced?.breakdown.periods[0]?.local_time).to.contain('18:30');
  });

  it('2.2.1: a total_cost 0.50 above the tariff (its own tariffs) disagrees, by 0.50', async () => {
    const tariff = aTariff221({ ...party(cpo221), id: 'TAR-OWN', elements: ELEMENTS_221 });
    const cdr = cdr221(cpo221, {
      cdr_location: place221('LOC-221'),
      tariffs: [tariff],
      total_cost: { excl_vat: 5.5, incl_vat: 6.5 },
    });
    await postCdr(cpo221, cdr);
    const check = await checkOf(cpo221, String(cdr.id));
    expect(check).to.deep.include({
      status: 'disagrees',
      tariff_id: 'TAR-OWN',
      theirs: { excl_vat: 5.5, incl_vat: 6.5 },
      ours: { excl_vat: 5, incl_vat: 6 },
      difference: { excl_vat: 0.5, incl_vat: 0.5 },
      tariff: { id: 'TAR-OWN', source: 'cdr_tariffs' },
    });
    expect(check.reason).to.contain('total_cost excl_vat: theirs 5.5, ours 5');
  });

  /** The CPO pushes tariff `id` at the test's prices (before the CDRs' start); answers it and a copy at twice the prices. */
  async function publishedAndDoubled(id: string): Promise<{ published: Json; doubled: Json }> {
    const published = aTariff221({
      ...party(cpo221),
      id,
      elements: ELEMENTS_221,
      last_updated: '2026-01-01T00:00:00Z',
    });
    await push(cpo221, 'tariffs', id, published);
    const elements = ELEMENTS_221.map((e) => ({
      ...e,
      price_components: e.price_components.map((c) => ({ ...c, price: c.price * 2 })),
    }));
    return { published, doubled: { ...published, elements } };
  }

  it('2.2.1: a CDR priced right by a tariff of its own that is not the version the CPO gave us disagrees, priced with that version', async () => {
    const { published, doubled } = await publishedAndDoubled('TAR-PUB');
    const cdr = cdr221(cpo221, {
      cdr_location: place221('LOC-221'),
      tariffs: [{ ...doubled, last_updated: '2025-06-01T00:00:00Z' }],
      total_cost: { excl_vat: 10, incl_vat: 12 },
    });
    await postCdr(cpo221, cdr);
    const check = await checkOf(cpo221, String(cdr.id));
    // was "agrees": the CDR's own tariff was taken as the partner's word
    expect(check).to.deep.include({
      status: 'disagrees',
      ours: { excl_vat: 5, incl_vat: 6 },
      difference: { excl_vat: 5, incl_vat: 6 },
      tariff: { id: 'TAR-PUB', source: 'cdr_tariffs' },
    });
    expect(check.reason)
      .to.contain(
        "the CDR's tariff TAR-PUB (last_updated 2025-06-01T00:00:00Z) is not the version the partner gave us (last_updated 2026-01-01T00:00:00Z)",
      )
      .and.contain('total_cost excl_vat: theirs 10, ours 5');
    expect(check.priced?.total_cost.excl_vat).to.equal(5);
    // the same tariff with another text: it prices the same, agrees, nothing noted
    const texts = cdr221(cpo221, {
      cdr_location: place221('LOC-221'),
      tariffs: [{ ...published, tariff_alt_text: [{ language: 'en', text: 'evenings cost more' }] }],
      total_cost: { excl_vat: 5, incl_vat: 6 },
    });
    await postCdr(cpo221, texts);
    expect(await checkOf(cpo221, String(texts.id))).to.deep.include({ status: 'agrees', notes: [] });
  });

  it('2.2.1: a tariff the CPO deleted after the session started still checks its CDR, with a note', async () => {
    const { doubled } = await publishedAndDoubled('TAR-GONE');
    const { country_code, party_id } = party(cpo221);
    const gone = await cpo221.sim.call('DELETE', 'tariffs', `/${country_code}/${party_id}/TAR-GONE`, undefined, {
      role: 'RECEIVER',
    });
    expect(gone.status, JSON.stringify(gone.body)).to.equal(200);
    // its own copy at other prices: was "agrees", the deleted tariff no longer held against it
    const own = cdr221(cpo221, {
      cdr_location: place221('LOC-221'),
      tariffs: [doubled],
      total_cost: { excl_vat: 10, incl_vat: 12 },
    });
    await postCdr(cpo221, own);
    const disputed = await checkOf(cpo221, String(own.id));
    expect(disputed).to.deep.include({ status: 'disagrees', ours: { excl_vat: 5, incl_vat: 6 } });
    expect(disputed.reason).to.contain('with the same last_updated');
    expect(disputed.notes.join(' ')).to.contain('TAR-GONE was deleted by the partner since');
    // naming it in its periods only: was "unpriced", the tariff "not given to us"
    const named = cdr221(cpo221, {
      cdr_location: place221('LOC-221'),
      charging_periods: PERIODS.map((p) => ({ ...p, tariff_id: 'TAR-GONE' })),
      total_cost: { excl_vat: 5, incl_vat: 6 },
    });
    await postCdr(cpo221, named);
    const check = await checkOf(cpo221, String(named.id));
    expect(check).to.deep.include({ status: 'agrees', tariff: { id: 'TAR-GONE', source: 'charging_period' } });
    expect(check.notes.join(' ')).to.contain('TAR-GONE was deleted by the partner since');
  });

  it('2.2.1: a pushed tariff updated after the session started: a difference is unpriced (not a dispute), a match agrees', async () => {
    const changed = aTariff221({
      ...party(cpo221),
      id: 'TAR-CHANGED',
      elements: ELEMENTS_221,
      last_updated: '2026-02-01T00:00:00Z',
    });
    await push(cpo221, 'tariffs', 'TAR-CHANGED', changed);
    const post = async (total: Json) => {
      const cdr = cdr221(cpo221, {
        cdr_location: place221('LOC-221'),
        charging_periods: PERIODS.map((p) => ({ ...p, tariff_id: 'TAR-CHANGED' })),
        total_cost: total,
      });
      await postCdr(cpo221, cdr);
      return checkOf(cpo221, String(cdr.id));
    };
    // was "disagrees": a bill by the tariff of the session's start was flagged as a dispute
    const off = await post({ excl_vat: 5.5, incl_vat: 6.5 });
    expect(off).to.deep.include({ status: 'unpriced', ours: { excl_vat: 5, incl_vat: 6 } });
    expect(off.reason).to.contain('total_cost excl_vat: theirs 5.5, ours 5').and.contain('after the session started');
    expect((await post({ excl_vat: 5, incl_vat: 6 })).status).to.equal('agrees');
  });

  it('a tariff updated after the session started: the version in force at the start prices the CDR (2.2.1 and 2.1.1)', async () => {
    // v1 before the sessions (5.00 / 6.00 for them), v2 after them at twice the prices
    const twice = <E extends { price_components: Array<{ price: number }> }>(elements: E[]): E[] =>
      elements.map((e) => ({ ...e, price_components: e.price_components.map((c) => ({ ...c, price: c.price * 2 })) }));
    const doubled = twice(ELEMENTS_221);
    const v1 = { id: 'TAR-VER', elements: ELEMENTS_221, last_updated: '2026-01-01T00:00:00Z' };
    const v2 = { id: 'TAR-VER', elements: doubled, last_updated: '2026-03-01T00:00:00Z' };
    for (const v of [v1, v2]) await push(cpo221, 'tariffs', 'TAR-VER', aTariff221({ ...party(cpo221), ...v }));
    const post = async (total: Json) => {
      const cdr = cdr221(cpo221, {
        cdr_location: place221('LOC-221'),
        charging_periods: PERIODS.map((p) => ({ ...p, tariff_id: 'TAR-VER' })),
        total_cost: total,
      });
      await postCdr(cpo221, cdr);
      return checkOf(cpo221, String(cdr.id));
    };
    const right = await post({ excl_vat: 5, incl_vat: 6 });
    expect(right).to.deep.include({ status: 'agrees', ours: { excl_vat: 5, incl_vat: 6 } });
    expect(right.notes.join(' ')).to.contain('version of 2026-01-01T00:00:00Z');
    // wrong under both versions (5.00 and 10.00): a dispute, no longer hidden as unpriced
    const wrong = await post({ excl_vat: 9.99, incl_vat: 11.99 });
    expect(wrong).to.deep.include({ status: 'disagrees', difference: { excl_vat: 4.99, incl_vat: 5.99 } });

    // 2.1.1: the same, the tariff PUT twice and its CDR naming it by its connector
    const v211 = (v: typeof v1, elements: Json[]) => aTariff({ id: 'TAR-VER', elements, last_updated: v.last_updated });
    await push(cpo211, 'tariffs', 'TAR-VER', v211(v1, ELEMENTS_211));
    await push(cpo211, 'tariffs', 'TAR-VER', v211(v2, twice(ELEMENTS_211)));
    const cdr = cdr211({ total_cost: 5 }, 'TAR-VER');
    await postCdr(cpo211, cdr);
    const check211 = await checkOf(cpo211, String(cdr.id));
    expect(check211).to.deep.include({ status: 'agrees', tariff: { id: 'TAR-VER', source: 'connector' } });
    expect(check211.notes.join(' ')).to.contain('version of 2026-01-01T00:00:00Z');
  });

  it("2.2.1: a right total beside a wrong total_energy or energy cost agrees, and the check's notes name them", async () => {
    const cdr = cdr221(cpo221, {
      cdr_location: place221('LOC-221'),
      charging_periods: PERIODS.map((p) => ({ ...p, tariff_id: 'TAR-PEAK' })),
      total_cost: { excl_vat: 5, incl_vat: 6 },
      total_energy: 25,
      total_energy_cost: { excl_vat: 9, incl_vat: 10.8 },
    });
    await postCdr(cpo221, cdr);
    const check = await checkOf(cpo221, String(cdr.id));
    expect(check.status).to.equal('agrees');
    expect(check.notes).to.include.members([
      "the CDR's total_energy: theirs 25, ours 10",
      "the CDR's total_energy_cost excl_vat: theirs 9, ours 5",
    ]);
  });

  it('a CDR we pull from the CPO is re-priced as a posted one is', async () => {
    const cdr = cdr221(cpo221, {
      cdr_location: place221('LOC-221'),
      charging_periods: PERIODS.map((p) => ({ ...p, tariff_id: 'TAR-PEAK' })),
      total_cost: { excl_vat: 5.5, incl_vat: 6.5 },
    });
    cpo221.sim.listOnSender('cdrs', [cdr]);
    const pulled = await world.api.request('POST', `/v1/partners/${cpo221.id}/pull/cdrs`, { body: {} });
    expect(pulled.status, JSON.stringify(pulled.body)).to.equal(200);
    expect(pulled.body).to.deep.include({ stored: 1 });
    const check = await checkOf(cpo221, String(cdr.id));
    expect(check).to.deep.include({ status: 'disagrees', difference: { excl_vat: 0.5, incl_vat: 0.5 } });
  });

  it('2.2.1: a tariff we were never pushed leaves the CDR unpriced, with the reason', async () => {
    const cdr = cdr221(cpo221, {
      cdr_location: place221('LOC-221'),
      charging_periods: PERIODS.map((p) => ({ ...p, tariff_id: 'TAR-NEVER-PUSHED' })),
    });
    await postCdr(cpo221, cdr);
    const check = await checkOf(cpo221, String(cdr.id));
    expect(check).to.deep.include({ status: 'unpriced', ours: null, difference: null, priced: null });
    expect(check.reason).to.contain('tariff TAR-NEVER-PUSHED').and.contain('not known');
  });

  it('2.2.1: a location we do not hold: a tariff that reads the local time leaves the CDR unpriced; another is priced in UTC, with a note', async () => {
    const cdr = cdr221(cpo221, {
      cdr_location: place221('LOC-UNKNOWN'),
      charging_periods: PERIODS.map((p) => ({ ...p, tariff_id: 'TAR-PEAK' })),
      total_cost: { excl_vat: 5, incl_vat: 6 },
    });
    await postCdr(cpo221, cdr);
    const check = await checkOf(cpo221, String(cdr.id));
    // was "disagrees" by 2.00: the peak hours read in UTC, a dispute raised on a guess
    expect(check).to.deep.include({ status: 'unpriced', ours: null, time_zone: { zone: 'UTC', source: 'utc' } });
    expect(check.reason).to.contain('LOC-UNKNOWN').and.contain('local time');
    expect(check.notes.join(' ')).to.contain('LOC-UNKNOWN').and.contain('not pushed to our locations Receiver');
    // a flat price reads no clock: priced in UTC all the same
    const flat = cdr221(cpo221, {
      cdr_location: place221('LOC-UNKNOWN'),
      tariffs: [aTariff221({ ...party(cpo221), id: 'TAR-ANYTIME', elements: [ELEMENTS_221[1]] })],
      total_cost: { excl_vat: 3, incl_vat: 3.6 },
    });
    await postCdr(cpo221, flat);
    expect(await checkOf(cpo221, String(flat.id))).to.deep.include({
      status: 'agrees',
      time_zone: { zone: 'UTC', source: 'utc' },
    });
  });

  it('2.1.1: a location pushed without a time_zone is no zone known (not the Etc/UTC it is held with): a tariff of peak hours leaves the CDR unpriced', async () => {
    await push(cpo211, 'locations', 'LOC-211-NOZONE', aLocation211({ id: 'LOC-211-NOZONE' }));
    const cdr = cdr211({
      location: aLocation211({
        id: 'LOC-211-NOZONE',
        evses: [anEvse211({ connectors: [aConnector211({ tariff_id: 'TAR-PEAK' })] })],
      }),
      total_cost: 5,
    });
    await postCdr(cpo211, cdr);
    const check = await checkOf(cpo211, String(cdr.id));
    // was "disagrees" (theirs 5.00, ours 3.00) with no note: read in the Etc/UTC we filled in
    expect(check).to.deep.include({ status: 'unpriced', time_zone: { zone: 'UTC', source: 'utc' } });
    expect(check.reason).to.contain('LOC-211-NOZONE').and.contain('local time');
    expect(check.notes.join(' ')).to.contain('Etc/UTC').and.contain('pushed without a time_zone');
    // it was pushed: no note may say it was not
    expect(check.notes.join(' ')).not.to.contain('not pushed');
  });

  it('2.2.1: a CDR with energy fed back (negative ENERGY) is taken and stored; its check is unpriced, saying why', async () => {
    const tariff = aTariff221({ ...party(cpo221), id: 'TAR-V2G', elements: ELEMENTS_221 });
    const cdr = cdr221(cpo221, {
      cdr_location: place221('LOC-221'),
      tariffs: [tariff],
      charging_periods: [
        ...PERIODS,
        { start_date_time: '2026-01-05T18:00:00Z', dimensions: [{ type: 'ENERGY', volume: -2 }] },
      ],
    });
    await postCdr(cpo221, cdr);
    const check = await checkOf(cpo221, String(cdr.id));
    expect(check.status).to.equal('unpriced');
    expect(check.reason).to.contain('energy fed back to the grid');
  });

  it('refuses (2001) a negative time, parking or power volume, and a negative total_cost outside a credit CDR', async () => {
    const refused = async (p: Emsp, cdr: Json, field: string): Promise<void> => {
      const answer = await p.sim.call('POST', 'cdrs', '', cdr, receiver(p));
      // was 1000: stored, then flagged by its check
      expect(answer.statusCode, JSON.stringify(answer.body)).to.equal(2001);
      expect(JSON.stringify(answer.body), field).to.contain(field);
      const read = await readBack(p, String(cdr.id));
      expect(read.statusCode).to.not.equal(1000);
    };
    const parked = { start_date_time: '2026-01-05T18:00:00Z', dimensions: [{ type: 'PARKING_TIME', volume: -0.5 }] };
    await refused(
      cpo221,
      cdr221(cpo221, { cdr_location: place221('LOC-221'), charging_periods: [...PERIODS, parked] }),
      'charging_periods.1.dimensions.0.volume',
    );
    await refused(
      cpo221,
      cdr221(cpo221, { cdr_location: place221('LOC-221'), total_cost: { excl_vat: -5, incl_vat: -6 } }),
      'total_cost',
    );
    await refused(cpo211, cdr211({ total_cost: -5 }), 'total_cost');
    // periods that contradict "a period ends when the next period starts": was 1000, then unpriced
    const at = (m: number) => new Date(Date.parse(START) + m * 60_000).toISOString();
    const period = (m: number) => ({ start_date_time: at(m), dimensions: [{ type: 'ENERGY', volume: 1 }] });
    await refused(
      cpo221,
      cdr221(cpo221, { cdr_location: place221('LOC-221'), charging_periods: [period(0), period(30), period(10)] }),
      'charging_periods.2.start_date_time',
    );
    await refused(cpo211, cdr211({ charging_periods: [period(0), period(90)] }), 'charging_periods.1.start_date_time');
    // an id a URL parser drops as a dot segment: was 1000, with a Location no client could fetch
    for (const id of ['.', '..']) {
      const dots = await cpo211.sim.call('POST', 'cdrs', '', cdr211({ id }), receiver(cpo211));
      expect(dots.status, id).to.equal(422);
      expect(JSON.stringify(dots.body)).to.contain('"id"');
      const dots221 = await cpo221.sim.call(
        'POST',
        'cdrs',
        '',
        cdr221(cpo221, { id, cdr_location: place221('LOC-221') }),
        receiver(cpo221),
      );
      // was 1000 on 2.2.1: its CDR id had a pattern of its own
      expect(dots221.status, `2.2.1 ${id}`).to.equal(422);
    }
    // 2.1.1 is told what 2.1.1 has: it named credit and credit_reference_id, fields 2.1.1 lacks
    const answer211 = await cpo211.sim.call('POST', 'cdrs', '', cdr211({ total_cost: -5 }), receiver(cpo211));
    expect(JSON.stringify(answer211.body)).to.contain('2.1.1 has no credit CDR').and.not.contain('credit_reference_id');
    // every amount, not total_cost alone; and a credit CDR names the CDR it credits
    await refused(
      cpo221,
      cdr221(cpo221, { cdr_location: place221('LOC-221'), total_fixed_cost: { excl_vat: -1, incl_vat: -1.21 } }),
      'total_fixed_cost',
    );
    await refused(
      cpo221,
      cdr221(cpo221, { cdr_location: place221('LOC-221'), credit: true, total_cost: { excl_vat: -5, incl_vat: -6 } }),
      'credit_reference_id',
    );
  });

  it('2.2.1: a credit CDR that comes before the CDR it credits is unpriced, and checked again when that CDR comes', async () => {
    const later = `C-LATER-${randomUUID().slice(0, 8)}`;
    const credit = cdr221(cpo221, {
      id: `${later}-C`,
      cdr_location: place221('LOC-221'),
      credit: true,
      credit_reference_id: later,
      total_cost: { excl_vat: -5, incl_vat: -6 },
    });
    await postCdr(cpo221, credit);
    const early = await checkOf(cpo221, String(credit.id));
    expect(early.status).to.equal('unpriced');
    expect(early.reason).to.contain(`credit CDR of CDR ${later}, which this party has not sent us`);
    // a second credit of it, without incl_vat, also before the CDR
    const second = cdr221(cpo221, {
      id: `${later}-C2`,
      cdr_location: place221('LOC-221'),
      credit: true,
      credit_reference_id: later,
      total_cost: { excl_vat: -5 },
    });
    await postCdr(cpo221, second);
    expect((await checkOf(cpo221, String(second.id))).status).to.equal('unpriced');
    // the CPO's outbox sent the credits first; the CDR they credit comes now
    await postCdr(
      cpo221,
      cdr221(cpo221, { id: later, cdr_location: place221('LOC-221'), total_cost: { excl_vat: 5, incl_vat: 6 } }),
    );
    const checked = await checkUntil(cpo221, String(credit.id), 'agrees');
    expect(checked).to.deep.include({ ours: { excl_vat: -5, incl_vat: -6 }, difference: { excl_vat: 0, incl_vat: 0 } });
    // the first to come is the credit; the second disagrees naming it, whatever order the CDR came in
    const twice = await checkUntil(cpo221, String(second.id), 'disagrees');
    expect(twice.reason).to.contain(`CDR ${later} was credited before by ${String(credit.id)}`);
    expect(twice.notes).to.include("the credit states no total_cost incl_vat; the credited CDR's, negated, is -6");
  });

  it('2.2.1: a credit CDR is held against the CDR it credits: in full it agrees, in part it disagrees (mod_cdrs "Credit CDRs")', async () => {
    // an id of 36 characters, as a normal CDR's may be: its credit's is 38 (CiString(39))
    const billed = cdr221(cpo221, {
      id: randomUUID().toUpperCase(),
      cdr_location: place221('LOC-221'),
      total_cost: { excl_vat: 5, incl_vat: 6 },
    });
    await postCdr(cpo221, billed);
    const full = cdr221(cpo221, {
      id: `${String(billed.id)}-C`,
      cdr_location: place221('LOC-221'),
      credit: true,
      credit_reference_id: billed.id,
      total_cost: { excl_vat: -5, incl_vat: -6 },
      total_energy: 12,
    });
    await postCdr(cpo221, full);
    const agrees = await checkOf(cpo221, String(full.id));
    expect(agrees).to.deep.include({
      status: 'agrees',
      theirs: { excl_vat: -5, incl_vat: -6 },
      ours: { excl_vat: -5, incl_vat: -6 },
      difference: { excl_vat: 0, incl_vat: 0 },
    });
    expect(agrees.notes).to.include(`credits CDR ${String(billed.id)}, which billed 5 EUR excl. VAT`);
    // the rest of its data is the credited CDR's: a volume that differs is noted
    expect(agrees.notes).to.include("the credit's total_energy is 12, the credited CDR's 10");
    // the operator reads the credit we hold of the partner by its id
    const { country_code, party_id } = party(cpo221);
    const held = await world.api.request(
      'GET',
      `/v1/partners/${cpo221.id}/objects/cdrs/${country_code}/${party_id}/${String(full.id)}`,
    );
    expect(held.status, JSON.stringify(held.body)).to.equal(200);

    const partial = cdr221(cpo221, {
      cdr_location: place221('LOC-221'),
      credit: true,
      credit_reference_id: billed.id,
      total_cost: { excl_vat: -3, incl_vat: -3.6 },
    });
    await postCdr(cpo221, partial);
    const disagrees = await checkOf(cpo221, String(partial.id));
    expect(disagrees).to.deep.include({
      status: 'disagrees',
      ours: { excl_vat: -5, incl_vat: -6 },
      difference: { excl_vat: 2, incl_vat: 2.4 },
    });
    expect(disagrees.reason).to.contain("total_cost excl_vat: theirs -3, the credited CDR's negated -5");

    // a second full credit of the same CDR: the partner would take back twice what it billed once
    const again = cdr221(cpo221, {
      cdr_location: place221('LOC-221'),
      credit: true,
      credit_reference_id: billed.id,
      total_cost: { excl_vat: -5, incl_vat: -6 },
    });
    await postCdr(cpo221, again);
    const twice = await checkOf(cpo221, String(again.id));
    expect(twice.status).to.equal('disagrees');
    expect(twice.reason)
      .to.contain(`CDR ${String(billed.id)} was credited before by`)
      .and.contain(String(full.id));
    // the first credit keeps its check
    expect((await checkOf(cpo221, String(full.id))).status).to.equal('agrees');
  });

  it('2.1.1: its own 2.1.1 tariffs price it (agrees); the pushed tariff its connector names, 0.50 off (disagrees); an unknown one (unpriced)', async () => {
    const own = cdr211({ tariffs: [aTariff({ id: 'TAR-OWN-211', elements: ELEMENTS_211 })], total_cost: 5 });
    const off = cdr211({ total_cost: 5.5 }, 'TAR-PEAK');
    const unknown = cdr211({ total_cost: 5 }, 'TAR-NEVER-PUSHED');
    for (const cdr of [own, off, unknown]) await postCdr(cpo211, cdr);

    const agrees = await checkOf(cpo211, String(own.id));
    expect(agrees).to.deep.include({
      version: '2.1.1',
      status: 'agrees',
      theirs: { excl_vat: 5 },
      ours: { excl_vat: 5, incl_vat: 5 },
      difference: { excl_vat: 0 },
      tariff: { id: 'TAR-OWN-211', source: 'cdr_tariffs' },
      time_zone: { zone: 'Europe/Amsterdam', source: 'location' },
    });
    const disagrees = await checkOf(cpo211, String(off.id));
    expect(disagrees).to.deep.include({
      status: 'disagrees',
      difference: { excl_vat: 0.5 },
      tariff: { id: 'TAR-PEAK', source: 'connector' },
    });
    const unpriced = await checkOf(cpo211, String(unknown.id));
    expect(unpriced.status).to.equal('unpriced');
    expect(unpriced.reason).to.contain('TAR-NEVER-PUSHED');
  });

  it('the same CDR posted again is answered as before and not checked again', async () => {
    const cdr = cdr221(cpo221, {
      cdr_location: place221('LOC-221'),
      charging_periods: PERIODS.map((p) => ({ ...p, tariff_id: 'TAR-PEAK' })),
      total_cost: { excl_vat: 5, incl_vat: 6 },
    });
    await postCdr(cpo221, cdr);
    const first = await checkOf(cpo221, String(cdr.id));
    await postCdr(cpo221, cdr);
    await new Promise((r) => setTimeout(r, 200));
    expect((await checkOf(cpo221, String(cdr.id))).checked_at).to.equal(first.checked_at);
  });

  it('GET /v1/cdr-checks lists the checks of one status, paged, for operators only', async () => {
    const res = await world.api.request('GET', '/v1/cdr-checks?status=disagrees');
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const list = (res.body as unknown as { value: Check[] }).value;
    expect(list.length).to.be.at.least(2);
    expect(list.every((c) => c.status === 'disagrees')).to.equal(true);
    expect(Number(res.headers.get('x-total-count'))).to.equal(list.length);
    const item = list.find(
      (c) => c.country_code === party(cpo211).country_code && c.party_id === party(cpo211).party_id,
    );
    expect(item).to.include({ version: '2.1.1', tariff_id: 'TAR-PEAK' });
    expect(item?.difference).to.deep.equal({ excl_vat: 0.5 });
    expect(item).to.not.have.property('priced');

    const page = await world.api.request('GET', '/v1/cdr-checks?status=disagrees&limit=1');
    expect((page.body as unknown as { value: Check[] }).value).to.have.length(1);
    expect(page.headers.get('link')).to.contain('offset=1').and.contain('status=disagrees');

    const all = await world.api.request('GET', '/v1/cdr-checks');
    expect(Number(all.headers.get('x-total-count'))).to.be.at.least(8);
    expect((await world.api.request('GET', '/v1/cdr-checks', { bearer: false })).status).to.equal(401);
    const none = await world.api.request('GET', `/v1/cdr-checks/${party(cpo221).country_code}/XXX/NOPE`);
    expect(none.status).to.equal(404);
    const openapi = await world.api.request('GET', '/openapi.json');
    expect(Object.keys(openapi.body.paths as Json)).to.include.members([
      '/v1/cdr-checks',
      '/v1/cdr-checks/{country_code}/{party_id}/{cdr_id}',
    ]);
  });

  it('2.2.1 and 2.1.1: of several tariffs in the CDR, the one its periods (its connector) name prices it; periods naming two leave it unpriced', async () => {
    const flat = (id: string, price: number, vat?: number): Json => ({
      id,
      elements: [
        { price_components: [{ type: 'ENERGY', price, step_size: 1, ...(vat === undefined ? {} : { vat }) }] },
      ],
    });
    const adhoc = aTariff221({ ...party(cpo221), ...flat('TAR-ADHOC', 0.6, 20), type: 'AD_HOC_PAYMENT' });
    const regular = aTariff221({ ...party(cpo221), ...flat('TAR-REG', 0.3, 20), min_price: undefined });
    const named = cdr221(cpo221, {
      cdr_location: place221('LOC-221'),
      tariffs: [adhoc, regular],
      charging_periods: PERIODS.map((p) => ({ ...p, tariff_id: 'TAR-REG' })),
      total_cost: { excl_vat: 3, incl_vat: 3.6 },
    });
    const halves = [5, 5].map((volume, i) => ({
      start_date_time: i === 0 ? START : '2026-01-05T18:00:00Z',
      dimensions: [{ type: 'ENERGY', volume }],
      tariff_id: i === 0 ? 'TAR-ADHOC' : 'TAR-REG',
    }));
    const two = cdr221(cpo221, {
      cdr_location: place221('LOC-221'),
      tariffs: [adhoc, regular],
      charging_periods: halves,
    });
    const old = cdr211(
      { tariffs: [aTariff(flat('TAR-ADHOC-211', 0.6)), aTariff(flat('TAR-REG-211', 0.3))], total_cost: 3 },
      'TAR-REG-211',
    );
    for (const cdr of [named, two]) await postCdr(cpo221, cdr);
    await postCdr(cpo211, old);

    // was "disagrees" by -3.00: priced with the first of the CDR's tariffs (TAR-ADHOC)
    expect(await checkOf(cpo221, String(named.id))).to.deep.include({
      status: 'agrees',
      ours: { excl_vat: 3, incl_vat: 3.6 },
      tariff: { id: 'TAR-REG', source: 'cdr_tariffs' },
    });
    expect(await checkOf(cpo211, String(old.id))).to.deep.include({
      status: 'agrees',
      tariff: { id: 'TAR-REG-211', source: 'cdr_tariffs' },
    });
    const unpriced = await checkOf(cpo221, String(two.id));
    expect(unpriced).to.deep.include({ status: 'unpriced', ours: null });
    expect(unpriced.reason).to.contain('TAR-ADHOC, TAR-REG').and.contain('priced with one');
  });

  it("2.1.1: the time zone of the CDR's location comes before our copy of a location pushed without one (held as Etc/UTC)", async () => {
    await push(cpo211, 'locations', 'LOC-211-NOTZ', aLocation211({ id: 'LOC-211-NOTZ' }));
    const cdr = cdr211({
      location: aLocation211({
        id: 'LOC-211-NOTZ',
        time_zone: 'Europe/Amsterdam',
        evses: [anEvse211({ connectors: [aConnector211({ tariff_id: 'TAR-PEAK' })] })],
      }),
      total_cost: 5,
    });
    await postCdr(cpo211, cdr);
    // was "disagrees" by 2.00: read in the Etc/UTC we filled in for the pushed location
    expect(await checkOf(cpo211, String(cdr.id))).to.deep.include({
      status: 'agrees',
      ours: { excl_vat: 5, incl_vat: 5 },
      time_zone: { zone: 'Europe/Amsterdam', source: 'cdr_location' },
    });
  });

  it('2.2.1: a CDR with no tariffs whose periods name none is priced with the one tariff its connector names in the pushed location; two: unpriced', async () => {
    const connector = (tariff_ids: string[]) =>
      anEvse({ uid: `EVSE-${tariff_ids.length}`, connectors: [aConnector({ tariff_ids })] });
    const location = aLocation({
      ...party(cpo221),
      id: 'LOC-CONNECTOR',
      evses: [connector(['TAR-PEAK']), connector(['TAR-PEAK', 'TAR-OTHER'])],
    });
    await push(cpo221, 'locations', 'LOC-CONNECTOR', location);
    const at = (evse_uid: string) => ({ ...place221('LOC-CONNECTOR'), evse_uid, connector_id: '1' });
    const one = cdr221(cpo221, { cdr_location: at('EVSE-1'), total_cost: { excl_vat: 30, incl_vat: 36 } });
    const two = cdr221(cpo221, { cdr_location: at('EVSE-2'), total_cost: { excl_vat: 5, incl_vat: 6 } });
    for (const cdr of [one, two]) await postCdr(cpo221, cdr);

    // was "unpriced": no tariff known
    expect(await checkOf(cpo221, String(one.id))).to.deep.include({
      status: 'disagrees',
      ours: { excl_vat: 5, incl_vat: 6 },
      difference: { excl_vat: 25, incl_vat: 30 },
      tariff: { id: 'TAR-PEAK', source: 'connector' },
    });
    const unpriced = await checkOf(cpo221, String(two.id));
    expect(unpriced.status).to.equal('unpriced');
    expect(unpriced.reason).to.contain('names 2 tariffs (TAR-PEAK, TAR-OTHER)');
  });

  it("2.2.1: of the tariffs a CDR's connector names, the one of a roamed session's type prices it (ad hoc passed over)", async () => {
    const adhoc = aTariff221({
      ...party(cpo221),
      id: 'TAR-ADHOC-PUSHED',
      type: 'AD_HOC_PAYMENT',
      elements: [{ price_components: [{ type: 'ENERGY', price: 0.99, step_size: 1 }] }],
    });
    await push(cpo221, 'tariffs', 'TAR-ADHOC-PUSHED', adhoc);
    const location = aLocation({
      ...party(cpo221),
      id: 'LOC-TYPED',
      evses: [anEvse({ uid: 'EVSE-T', connectors: [aConnector({ tariff_ids: ['TAR-ADHOC-PUSHED', 'TAR-PEAK'] })] })],
    });
    await push(cpo221, 'locations', 'LOC-TYPED', location);
    const cdr = cdr221(cpo221, {
      cdr_location: { ...place221('LOC-TYPED'), evse_uid: 'EVSE-T', connector_id: '1' },
      total_cost: { excl_vat: 5, incl_vat: 6 },
    });
    await postCdr(cpo221, cdr);
    // was "unpriced": the connector names 2 tariffs, which applied is not known
    expect(await checkOf(cpo221, String(cdr.id))).to.deep.include({
      status: 'agrees',
      tariff: { id: 'TAR-PEAK', source: 'connector' },
    });
  });

  it('a CDR left unpriced for want of the tariff it names is checked again when the partner pushes it (2.2.1 and 2.1.1 PUT)', async () => {
    const later = (p: Emsp, id: string, vat?: number): Json => {
      const elements = [{ price_components: [{ type: 'ENERGY', price: 0.3, step_size: 1, ...(vat ? { vat } : {}) }] }];
      return p.version === '2.2.1'
        ? aTariff221({ ...party(p), id, elements, min_price: undefined })
        : aTariff({ id, elements });
    };
    const cdr = cdr221(cpo221, {
      cdr_location: place221('LOC-221'),
      charging_periods: PERIODS.map((p) => ({ ...p, tariff_id: 'TAR-LATER' })),
      total_cost: { excl_vat: 50, incl_vat: 59.5 },
    });
    const old = cdr211({ total_cost: 50 }, 'TAR-LATER-211');
    await postCdr(cpo221, cdr);
    await postCdr(cpo211, old);
    const waiting = await checkOf(cpo221, String(cdr.id));
    expect(waiting).to.deep.include({ status: 'unpriced', tariff_id: 'TAR-LATER' });
    expect(waiting.reason).to.contain('TAR-LATER').and.contain('not known');
    expect((await checkOf(cpo211, String(old.id))).status).to.equal('unpriced');

    await push(cpo221, 'tariffs', 'TAR-LATER', later(cpo221, 'TAR-LATER', 19));
    await push(cpo211, 'tariffs', 'TAR-LATER-211', later(cpo211, 'TAR-LATER-211'));
    // was "unpriced" for good: the 47.00 overcharge was never flagged
    expect(await checkUntil(cpo221, String(cdr.id), 'disagrees')).to.deep.include({
      ours: { excl_vat: 3, incl_vat: 3.57 },
      difference: { excl_vat: 47, incl_vat: 55.93 },
      tariff: { id: 'TAR-LATER', source: 'charging_period' },
    });
    expect(await checkUntil(cpo211, String(old.id), 'disagrees')).to.deep.include({ difference: { excl_vat: 47 } });
  });

  it('a CDR naming a tariff the CPO never pushed: its tariffs Sender is pulled, once, and prices it (2.2.1 and 2.1.1)', async () => {
    const cpo = await world.partner('2.2.1', 'CPO');
    const old = await world.partner('2.1.1', 'CPO');
    const energy = [{ price_components: [{ type: 'ENERGY', price: 0.3, step_size: 1 }] }];
    cpo.sim.listOnSender('tariffs', [aTariff221({ ...party(cpo), id: 'TAR-SENDER', elements: energy })]);
    old.sim.listOnSender('tariffs', [aTariff({ id: 'TAR-SENDER-211', elements: energy })]);
    const tariffGets = (p: Emsp) => p.sim.received.filter((r) => r.method === 'GET' && r.path.includes('tariffs'));

    const cdr = cdr221(cpo, {
      charging_periods: PERIODS.map((p) => ({ ...p, tariff_id: 'TAR-SENDER' })),
      total_cost: { excl_vat: 50, incl_vat: 50 },
    });
    await postCdr(cpo, cdr);
    const cdrOld = cdr211({ total_cost: 50 }, 'TAR-SENDER-211');
    await postCdr(old, cdrOld);
    // was "unpriced" until the CPO pushed the tariff, which a CPO serving it to pull never does
    expect(await checkUntil(cpo, String(cdr.id), 'disagrees')).to.deep.include({
      ours: { excl_vat: 3, incl_vat: 3 },
      difference: { excl_vat: 47, incl_vat: 47 },
      tariff: { id: 'TAR-SENDER', source: 'charging_period' },
    });
    expect(await checkUntil(old, String(cdrOld.id), 'disagrees')).to.deep.include({ difference: { excl_vat: 47 } });
    expect(tariffGets(cpo)).to.have.length(1);
    expect(tariffGets(old)).to.have.length(1);

    // a tariff its Sender does not list either: unpriced, and no second pull so soon
    const unlisted = cdr221(cpo, {
      charging_periods: PERIODS.map((p) => ({ ...p, tariff_id: 'TAR-NOWHERE' })),
      total_cost: { excl_vat: 5, incl_vat: 5 },
    });
    await postCdr(cpo, unlisted);
    expect(await checkOf(cpo, String(unlisted.id))).to.deep.include({ status: 'unpriced', tariff_id: 'TAR-NOWHERE' });
    await new Promise((r) => setTimeout(r, 300));
    expect(tariffGets(cpo)).to.have.length(1);
  });

  it("the operator's pull of a CPO's tariffs checks again the CDRs left unpriced for want of them", async () => {
    const cpo = await world.partner('2.2.1', 'CPO');
    const cdr = cdr221(cpo, {
      charging_periods: PERIODS.map((p) => ({ ...p, tariff_id: 'TAR-PULLED' })),
      total_cost: { excl_vat: 50, incl_vat: 59.5 },
    });
    await postCdr(cpo, cdr);
    // its Sender listed nothing when the CDR came: unpriced
    expect(await checkOf(cpo, String(cdr.id))).to.deep.include({ status: 'unpriced', tariff_id: 'TAR-PULLED' });
    const elements = [{ price_components: [{ type: 'ENERGY', price: 0.3, vat: 19, step_size: 1 }] }];
    cpo.sim.listOnSender('tariffs', [aTariff221({ ...party(cpo), id: 'TAR-PULLED', elements, min_price: undefined })]);
    const pulled = await world.api.request('POST', `/v1/partners/${cpo.id}/pull/tariffs`, { body: {} });
    expect(pulled.status, JSON.stringify(pulled.body)).to.equal(200);
    expect(pulled.body).to.deep.include({ stored: 1 });
    // was "unpriced" for good: only a push checked it again
    expect(await checkUntil(cpo, String(cdr.id), 'disagrees')).to.deep.include({
      ours: { excl_vat: 3, incl_vat: 3.57 },
      difference: { excl_vat: 47, incl_vat: 55.93 },
    });
  });

  it('a pull does not put a tariff the Sender lists over the same tariff pushed with a later last_updated', async () => {
    const cpo = await world.partner('2.2.1', 'CPO');
    const priced = (price: number, last_updated: string) =>
      aTariff221({
        ...party(cpo),
        id: 'TAR-BOTH',
        elements: [{ price_components: [{ type: 'ENERGY', price, step_size: 1 }] }],
        last_updated,
      });
    await push(cpo, 'tariffs', 'TAR-BOTH', priced(0.5, '2026-06-01T00:00:00Z'));
    cpo.sim.listOnSender('tariffs', [priced(0.3, '2026-01-01T00:00:00Z')]);
    const pulled = await world.api.request('POST', `/v1/partners/${cpo.id}/pull/tariffs`, { body: {} });
    expect(pulled.status, JSON.stringify(pulled.body)).to.equal(200);
    // was stored, the older over the newer: a right CDR under the pushed tariff then disagreed
    expect(pulled.body).to.deep.include({ stored: 0, rejected: 0 });
    const { country_code, party_id } = party(cpo);
    const held = await cpo.sim.call(
      'GET',
      'tariffs',
      `/${country_code}/${party_id}/TAR-BOTH`,
      undefined,
      receiver(cpo),
    );
    expect(held.data).to.deep.include({ last_updated: '2026-06-01T00:00:00Z' });
  });

  it('a CDR left unpriced is checked again when it is posted again', async () => {
    const cdr = cdr221(cpo221, {
      cdr_location: { ...place221('LOC-LATE'), evse_uid: 'EVSE-LATE', connector_id: '1' },
      total_cost: { excl_vat: 5, incl_vat: 6 },
    });
    await postCdr(cpo221, cdr);
    expect((await checkOf(cpo221, String(cdr.id))).reason).to.contain('LOC-LATE was not pushed');
    const evses = [anEvse({ uid: 'EVSE-LATE', connectors: [aConnector({ tariff_ids: ['TAR-PEAK'] })] })];
    await push(cpo221, 'locations', 'LOC-LATE', aLocation({ ...party(cpo221), id: 'LOC-LATE', evses }));
    // was left unpriced: a CDR that had a check was never checked again
    await postCdr(cpo221, cdr);
    expect(await checkUntil(cpo221, String(cdr.id), 'agrees')).to.deep.include({
      tariff: { id: 'TAR-PEAK', source: 'connector' },
      time_zone: { zone: 'Europe/Amsterdam', source: 'location' },
    });
  });

  it('a CDR whose end is before its start is refused with 2001 naming the field, and not stored (2.2.1 and 2.1.1)', async () => {
    const backwards221 = cdr221(cpo221, { cdr_location: place221('LOC-221'), end_date_time: '2026-01-05T16:30:00Z' });
    const backwards211 = cdr211({ stop_date_time: '2026-01-05T16:30:00Z' });
    for (const [p, cdr, field] of [
      [cpo221, backwards221, 'end_date_time'],
      [cpo211, backwards211, 'stop_date_time'],
    ] as const) {
      const answer = await p.sim.call('POST', 'cdrs', '', cdr, receiver(p));
      // was 1000, stored for good with only the check saying "invalid_cdr"
      expect(answer.statusCode, JSON.stringify(answer.body)).to.equal(2001);
      const errors = (answer.body as { errors?: Array<{ field: string; message: string }> }).errors ?? [];
      expect(errors.map((e) => e.field)).to.deep.equal([field]);
      expect(errors[0]?.message).to.contain('before start_date_time');
      const read = await readBack(p, String(cdr.id));
      expect(read.status).to.equal(404);
    }
  });

  it('2.2.1: a CDR with a negative total_energy (energy fed back) is taken and stored; its check is unpriced, saying why', async () => {
    const cdr = cdr221(cpo221, {
      cdr_location: place221('LOC-221'),
      charging_periods: [
        { start_date_time: START, dimensions: [{ type: 'ENERGY', volume: -10 }], tariff_id: 'TAR-PEAK' },
      ],
      total_energy: -10,
      total_cost: { excl_vat: 0, incl_vat: 0 },
    });
    // was HTTP 422: total_energy must be >= 0
    await postCdr(cpo221, cdr);
    const check = await checkOf(cpo221, String(cdr.id));
    expect(check.status).to.equal('unpriced');
    expect(check.reason).to.contain('energy fed back to the grid');
  });
});
