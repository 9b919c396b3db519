import { expect } from 'chai';
import { OcpiContext } from '../../src/ocpi/core/context.js';
import type { StoredCdr, StoredSession } from '../../src/ocpi/sessions/stored.js';
import {
  aCdr211,
  aCdr221,
  aConnector,
  aConnector211,
  aLocation,
  aLocation211,
  aSession,
  aSession221,
  aTariff,
  aTariff221,
  aToken,
  aToken221,
  anEvse,
  anEvse211,
  credentials211,
  credentials221,
  isoAt,
  type Json,
  type PartyOf,
} from '../support/ocpi-builders.js';
import {
  OcpiApi,
  base64,
  embeddedTarget,
  uniqueParty,
  type OcpiTarget,
  type RegisteredPartner,
} from '../support/ocpi-harness.js';
import type { ReceivedRequest } from '../support/ocpi-partners.js';
import { OcpiSpec, type ObjectName, type SpecVersion } from '../support/ocpi-spec/validate.js';

/**
 * Every endpoint of every OCPI mount, found as a partner finds them (versions URL, version
 * details) and cross-checked against /openapi.json, held against the specification: the schemas
 * in test/support/ocpi-spec were written from the spec text, not from the platform's.
 *
 * Each `it` checks one property over the whole route table and lists every endpoint that breaks
 * it, so one run shows all of them.
 */

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
/** Which of our roles answers the endpoint; its caller is a partner of the other role. */
type Side = 'CPO' | 'EMSP' | 'ANY';
type Kind = 'versions' | 'details' | 'credentials' | 'list' | 'object' | 'call';
type Params = Record<string, string>;

/** The partners and parties a sweep uses. */
interface World {
  /** an eMSP partner: the caller of our CPO side */
  emsp: RegisteredPartner;
  /** a CPO partner: the caller of our eMSP side */
  cpo: RegisteredPartner;
  /** partners of the same roles, for "the wrong role" and "another party" */
  emsp2: RegisteredPartner;
  cpo2: RegisteredPartner;
  /** CPO partners whose commands Receiver accepts: the callers of our command result URLs */
  commandCpo: Record<SpecVersion, RegisteredPartner>;
  /** the uid of a command we sent, per mount of its result URL */
  commandUid: Record<string, string>;
}

interface Success {
  params?: Params;
  body?: (w: World) => unknown;
  /** the caller, when not the default one of the endpoint's side */
  as?: (w: World) => RegisteredPartner;
  /** acceptable HTTP statuses (default 200) */
  status?: number[];
}

interface Endpoint {
  method: Method;
  /** the OpenAPI path template */
  path: string;
  /** the spec version the answers follow */
  version: SpecVersion;
  side: Side;
  kind: Kind;
  /** the schema of a success's `data` (the items' for a list) */
  data?: ObjectName;
  /** a valid body for a caller of `party` */
  body?: (party: PartyOf) => unknown;
  /** the spec object that body is (checked, so that a failure is the platform's, not the test data's) */
  bodyIs?: ObjectName;
  /** a body that fails the endpoint's schema */
  bad?: unknown;
  /** how to make it succeed */
  ok?: Success;
}

const OUR: PartyOf = { country_code: 'NL', party_id: 'EVP' };
const MISSING = 'SW-MISSING';
const BAD_STAMP = { last_updated: 'yesterday' };
const FROM = '2000-01-01T00:00:00Z';
const RESPONSE_URL = 'https://emsp.example.com/ocpi/commands/response/1';
/** Coordinates both versions' GeoLocation regexes accept (2.1.1: six decimals; 2.2.1: five to seven). */
const COORDINATES = { latitude: '52.090000', longitude: '5.121000' };

/** Maximum lengths of the id path segments (the `string(n)`/`CiString(n)` of the object fields). */
const ID_MAX: Record<SpecVersion, Record<string, number>> = {
  // mod_locations.md 2.1.1 GET Object: location_id string(39), evse_uid string(39), connector_id string(36)
  // (no cdr_id: 2.1.1 defines no structure for the eMSP's CDR URL, it is the Location the eMSP answers)
  '2.1.1': { location_id: 39, evse_uid: 39, connector_id: 36, session_id: 36, tariff_id: 36, token_uid: 36 },
  // mod_locations.asciidoc: CiString(36) each; mod_cdrs.asciidoc CDR.id CiString(39)
  '2.2.1': {
    location_id: 36,
    evse_uid: 36,
    connector_id: 36,
    session_id: 36,
    tariff_id: 36,
    token_uid: 36,
    cdr_id: 39,
  },
};

// ---------------------------------------------------------------------------------------------
// spec-valid bodies

function location211(id: string): Json {
  return aLocation211({
    id,
    postal_code: '3511AA',
    coordinates: COORDINATES,
    evses: [anEvse211({ uid: 'SW-E1', connectors: [aConnector211({ id: '1' })] })],
  });
}

function location221(party: PartyOf, id: string): Json {
  return aLocation({
    ...party,
    id,
    coordinates: COORDINATES,
    evses: [anEvse({ uid: 'SW-E1', connectors: [aConnector({ id: '1' })] })],
  });
}

function cdrLocation221(): Json {
  return {
    id: 'SW-LOC',
    address: 'Main street 1',
    city: 'Utrecht',
    country: 'NLD',
    coordinates: COORDINATES,
    evse_uid: 'SW-E1',
    evse_id: 'NL*EVP*E1',
    connector_id: '1',
    connector_standard: 'IEC_62196_T2',
    connector_format: 'SOCKET',
    connector_power_type: 'AC_3_PHASE',
  };
}

const start211 = (p: PartyOf): Json => ({
  response_url: RESPONSE_URL,
  token: aToken({ uid: `SW-CMD-${p.party_id}` }),
  location_id: 'SW-OWN-1',
  evse_uid: 'SW-OWN-E1',
});
const start221 = (p: PartyOf): Json => ({
  response_url: RESPONSE_URL,
  token: aToken221({ ...p, uid: `SW-CMD-${p.party_id}` }),
  location_id: 'SW-OWN-1',
  evse_uid: 'SW-OWN-E1',
});

function commandBodies(version: SpecVersion): Record<string, (p: PartyOf) => Json> {
  const start = version === '2.1.1' ? start211 : start221;
  return {
    START_SESSION: start,
    STOP_SESSION: () => ({ response_url: RESPONSE_URL, session_id: 'SW-NO-SESSION' }),
    RESERVE_NOW: (p) => ({
      ...start(p),
      expiry_date: isoAt(3600).replace('.000Z', 'Z'),
      // ReserveNow.reservation_id: int in 2.1.1, CiString(36) in 2.2.1
      reservation_id: version === '2.1.1' ? 7 : 'SW-R-1',
    }),
    UNLOCK_CONNECTOR: () => ({
      response_url: RESPONSE_URL,
      location_id: 'SW-OWN-1',
      evse_uid: 'SW-OWN-E1',
      connector_id: '1',
    }),
    CANCEL_RESERVATION: () => ({ response_url: RESPONSE_URL, reservation_id: 'SW-R-1' }),
  };
}

// ---------------------------------------------------------------------------------------------
// the route table

function cpoMount(version: SpecVersion): Endpoint[] {
  const base = `/ocpi/cpo/${version}`;
  const own = { location_id: 'SW-OWN-1', evse_uid: 'SW-OWN-E1', connector_id: '1' };
  const token = (p: PartyOf): Json =>
    version === '2.1.1' ? aToken({ uid: 'SW-RT-1' }) : aToken221({ ...p, uid: 'SW-RT-1' });
  const commands = commandBodies(version);
  const names =
    version === '2.1.1' ? ['START_SESSION', 'STOP_SESSION', 'RESERVE_NOW', 'UNLOCK_CONNECTOR'] : Object.keys(commands);
  const e = (x: Omit<Endpoint, 'version' | 'side'>): Endpoint => ({ version, side: 'CPO', ...x });
  return [
    e({ method: 'GET', path: base, kind: 'details', data: 'VersionDetails' }),
    ...credentials(base, version, 'CPO'),
    e({ method: 'GET', path: `${base}/locations`, kind: 'list', data: 'Location' }),
    e({
      method: 'GET',
      path: `${base}/locations/{location_id}`,
      kind: 'object',
      data: 'Location',
      ok: { params: own },
    }),
    e({
      method: 'GET',
      path: `${base}/locations/{location_id}/{evse_uid}`,
      kind: 'object',
      data: 'EVSE',
      ok: { params: own },
    }),
    e({
      method: 'GET',
      path: `${base}/locations/{location_id}/{evse_uid}/{connector_id}`,
      kind: 'object',
      data: 'Connector',
      ok: { params: own },
    }),
    e({ method: 'GET', path: `${base}/sessions`, kind: 'list', data: 'Session' }),
    ...(version === '2.2.1'
      ? [
          e({
            method: 'PUT',
            path: `${base}/sessions/{session_id}/charging_preferences`,
            kind: 'call',
            data: 'ChargingPreferencesResponse',
            body: () => ({ profile_type: 'FAST', departure_time: '2026-01-01T18:00:00Z' }),
            bodyIs: 'ChargingPreferences',
            bad: { profile_type: 'WARP' },
            ok: { params: { session_id: 'SW-OS-1' } },
          }),
        ]
      : []),
    e({ method: 'GET', path: `${base}/cdrs`, kind: 'list', data: 'CDR' }),
    e({ method: 'GET', path: `${base}/tariffs`, kind: 'list', data: 'Tariff' }),
    e({
      method: 'PUT',
      path: `${base}/tokens/{country_code}/{party_id}/{token_uid}`,
      kind: 'object',
      data: 'Token',
      body: token,
      bodyIs: 'Token',
      bad: BAD_STAMP,
      ok: { params: { token_uid: 'SW-RT-1' }, status: [200, 201] },
    }),
    e({
      method: 'PATCH',
      path: `${base}/tokens/{country_code}/{party_id}/{token_uid}`,
      kind: 'object',
      data: 'Token',
      body: () => ({ valid: false, last_updated: '2026-01-01T13:00:00Z' }),
      bad: BAD_STAMP,
      // 2.1.1 mod_tokens.md "Example: invalidate a Token" is `{"valid": false}`; 2.2.1 wants last_updated
      ok: { params: { token_uid: 'SW-RT-1' }, ...(version === '2.1.1' ? { body: () => ({ valid: false }) } : {}) },
    }),
    e({
      method: 'GET',
      path: `${base}/tokens/{country_code}/{party_id}/{token_uid}`,
      kind: 'object',
      data: 'Token',
      ok: { params: { token_uid: 'SW-RT-1' } },
    }),
    ...names.map((name) =>
      e({
        method: 'POST',
        path: `${base}/commands/${name}`,
        kind: 'call',
        data: 'CommandResponse',
        body: commands[name],
        bad: { response_url: 5 },
      }),
    ),
    e({
      method: 'POST',
      path: `${base}/commands/{command}`,
      kind: 'call',
      data: 'CommandResponse',
      body: commands.START_SESSION,
      ok: { params: { command: 'SELF_DESTRUCT' } },
    }),
  ];
}

function credentials(base: string, version: SpecVersion, side: Side): Endpoint[] {
  const path = `${base}/credentials`;
  const e = (method: Method): Endpoint => ({ method, path, version, side, kind: 'credentials', data: 'Credentials' });
  return [
    { ...e('GET') },
    { ...e('POST'), bad: { token: 5 } },
    { ...e('PUT'), bad: { token: 5 } },
    { ...e('DELETE'), data: undefined },
  ];
}

/** The eMSP side's Receiver interfaces and Sender lists, on the eMSP mounts and the overview. */
function emspInterfaces(base: string, version: SpecVersion, key: string): Endpoint[] {
  const e = (x: Omit<Endpoint, 'version' | 'side'>): Endpoint => ({ version, side: 'EMSP', ...x });
  const v211 = version === '2.1.1';
  const loc = `SW-L-${key}`;
  const locPath = `${base}/locations/{country_code}/{party_id}/{location_id}`;
  const evsePath = `${locPath}/{evse_uid}`;
  const connectorPath = `${evsePath}/{connector_id}`;
  const at = { location_id: loc, evse_uid: 'SW-E2', connector_id: '2' };
  // a PATCH carries last_updated in the checks that are not about it; the success check of 2.1.1
  // sends the spec's own example, which has none (2.2.1 requires it: "Any request to the PATCH
  // method SHALL contain the last_updated field")
  const patch = (example: Json, params: Params) => ({
    body: () => ({ ...example, last_updated: '2026-01-01T13:00:00Z' }),
    bad: BAD_STAMP,
    ok: { params, ...(v211 ? { body: () => example } : {}) },
  });
  const sessionBody = (p: PartyOf): Json =>
    v211 ? aSession({ id: `SW-S-${key}`, location: location211('SW-LOC') }) : aSession221({ ...p, id: `SW-S-${key}` });
  const tariffBody = (p: PartyOf): Json =>
    v211 ? aTariff({ id: `SW-T-${key}` }) : aTariff221({ ...p, id: `SW-T-${key}` });
  const cdrBody = (p: PartyOf): Json =>
    v211
      ? aCdr211({ id: `SW-C-${key}`, location: location211('SW-LOC') })
      : aCdr221({ ...p, id: `SW-C-${key}`, cdr_location: cdrLocation221() });
  const created = [200, 201];
  return [
    // Locations Receiver; the 2.1.1 PATCH bodies are the examples of mod_locations.md 2.2.3
    e({
      method: 'PUT',
      path: locPath,
      kind: 'object',
      data: 'Location',
      body: (p) => (v211 ? location211(loc) : location221(p, loc)),
      bodyIs: 'Location',
      bad: BAD_STAMP,
      ok: { params: at, status: created },
    }),
    e({
      method: 'PUT',
      path: evsePath,
      kind: 'object',
      data: 'EVSE',
      body: () =>
        v211
          ? anEvse211({ uid: 'SW-E2', connectors: [aConnector211({ id: '1' })] })
          : anEvse({ uid: 'SW-E2', connectors: [aConnector({ id: '1' })] }),
      bodyIs: 'EVSE',
      bad: BAD_STAMP,
      ok: { params: at, status: created },
    }),
    e({
      method: 'PUT',
      path: connectorPath,
      kind: 'object',
      data: 'Connector',
      body: () => (v211 ? aConnector211({ id: '2' }) : aConnector({ id: '2' })),
      bodyIs: 'Connector',
      bad: BAD_STAMP,
      ok: { params: at, status: created },
    }),
    e({
      method: 'PATCH',
      path: locPath,
      kind: 'object',
      data: 'Location',
      ...patch({ name: 'Interparking Gent Zuid' }, at),
    }),
    e({
      method: 'PATCH',
      path: evsePath,
      kind: 'object',
      data: 'EVSE',
      ...patch({ status: 'CHARGING' }, at),
    }),
    e({
      method: 'PATCH',
      path: connectorPath,
      kind: 'object',
      data: 'Connector',
      ...patch(v211 ? { tariff_id: '15' } : { tariff_ids: ['15'] }, at),
    }),
    e({ method: 'GET', path: locPath, kind: 'object', data: 'Location', ok: { params: at } }),
    e({ method: 'GET', path: evsePath, kind: 'object', data: 'EVSE', ok: { params: at } }),
    e({ method: 'GET', path: connectorPath, kind: 'object', data: 'Connector', ok: { params: at } }),
    // Sessions Receiver; 2.1.1 PATCH: the example of mod_sessions.md 2.2.3
    ...(['PUT', 'PATCH', 'GET'] as const).map((method) =>
      e({
        method,
        path: `${base}/sessions/{country_code}/{party_id}/{session_id}`,
        kind: 'object',
        data: 'Session',
        ...(method === 'PUT' ? { body: sessionBody, bodyIs: 'Session' as const, bad: BAD_STAMP } : {}),
        ok: { params: { session_id: `SW-S-${key}` }, ...(method === 'PUT' ? { status: created } : {}) },
        ...(method === 'PATCH'
          ? patch({ total_cost: v211 ? 0.6 : { excl_vat: 0.6 } }, { session_id: `SW-S-${key}` })
          : {}),
      }),
    ),
    // Tariffs Receiver (PATCH is 2.1.1 only: 2.2.1 mod_tariffs "PATCH n/a"); 2.1.1 PATCH: the example
    // of mod_tariffs.md 2.2.3
    ...(['PUT', ...(v211 ? ['PATCH' as const] : []), 'GET', 'DELETE'] as const).map((method) =>
      e({
        method,
        path: `${base}/tariffs/{country_code}/{party_id}/{tariff_id}`,
        kind: 'object',
        data: method === 'DELETE' ? undefined : 'Tariff',
        ...(method === 'PUT' ? { body: tariffBody, bodyIs: 'Tariff' as const, bad: BAD_STAMP } : {}),
        ok: { params: { tariff_id: `SW-T-${key}` }, ...(method === 'PUT' ? { status: created } : {}) },
        ...(method === 'PATCH'
          ? patch(
              { elements: [{ price_components: [{ type: 'TIME', price: 2.5, step_size: 300 }] }] },
              { tariff_id: `SW-T-${key}` },
            )
          : {}),
      }),
    ),
    // CDRs Receiver
    e({
      method: 'POST',
      path: `${base}/cdrs`,
      kind: 'object',
      body: cdrBody,
      bodyIs: 'CDR',
      bad: BAD_STAMP,
      ok: { status: created },
    }),
    e({
      method: 'GET',
      path: `${base}/cdrs/{country_code}/{party_id}/{cdr_id}`,
      kind: 'object',
      data: 'CDR',
      ok: { params: { cdr_id: `SW-C-${key}` } },
    }),
    // Tokens Sender
    e({ method: 'GET', path: `${base}/tokens`, kind: 'list', data: 'Token' }),
    e({
      method: 'POST',
      path: `${base}/tokens/{token_uid}/authorize`,
      kind: 'call',
      data: 'AuthorizationInfo',
      body: () => ({ location_id: 'THEIR-LOC' }),
      bodyIs: 'LocationReferences',
      bad: { location_id: 7 },
      ok: { params: { token_uid: 'SW-TOK-1' } },
    }),
    // Commands: the result of a command we sent
    e({
      method: 'POST',
      path: `${base}/commands/{command}/{uid}`,
      kind: 'call',
      body: () => ({ result: 'ACCEPTED' }),
      // 2.1.1 posts the Charge Point's CommandResponse; 2.2.1 a CommandResult
      bodyIs: v211 ? 'CommandResponse' : 'CommandResult',
      bad: { result: 'MAYBE' },
      ok: { params: { command: 'START_SESSION', uid: '' }, as: (w) => w.commandCpo[version] },
    }),
  ];
}

/** The overview mount serves our CPO side to eMSP partners and our eMSP side to CPO partners. */
function overviewMount(): Endpoint[] {
  const base = '/ocpi/2.2.1';
  const cpo = cpoMount('2.2.1')
    .filter((x) => x.kind !== 'details' && x.kind !== 'credentials')
    .filter((x) => !(x.path.startsWith('/ocpi/cpo/2.2.1/locations/') && x.method === 'GET'))
    .map((x) => ({ ...x, path: x.path.replace('/ocpi/cpo/2.2.1', base) }));
  const emsp = emspInterfaces(base, '2.2.1', 'ov').map((x): Endpoint => {
    // one location path serves both sides: a CPO partner reads what it pushed, an eMSP partner ours
    const both = x.method === 'GET' && x.path.startsWith(`${base}/locations/`);
    return both ? { ...x, side: 'ANY' } : x;
  });
  return [
    { method: 'GET', path: `${base}/versions`, version: '2.2.1', side: 'ANY', kind: 'versions', data: 'Version' },
    {
      method: 'GET',
      path: `${base}/versions/{version}`,
      version: '2.2.1',
      side: 'ANY',
      kind: 'details',
      data: 'VersionDetails',
      ok: { params: { version: '2.2.1' } },
    },
    ...credentials(base, '2.2.1', 'ANY'),
    ...cpo,
    ...emsp,
  ];
}

function routeTable(): Endpoint[] {
  const versions = (role: 'cpo' | 'emsp', side: Side): Endpoint => ({
    method: 'GET',
    path: `/ocpi/${role}/versions`,
    // the versions list is outside any version: held to the newest schema (its VersionNumber knows 2.2.1)
    version: '2.2.1',
    side,
    kind: 'versions',
    data: 'Version',
  });
  const emspMount = (version: SpecVersion): Endpoint[] => [
    { method: 'GET', path: `/ocpi/emsp/${version}`, version, side: 'EMSP', kind: 'details', data: 'VersionDetails' },
    ...credentials(`/ocpi/emsp/${version}`, version, 'EMSP'),
    ...emspInterfaces(`/ocpi/emsp/${version}`, version, `e${version.replace(/\./g, '')}`),
  ];
  return [
    versions('cpo', 'CPO'),
    versions('emsp', 'EMSP'),
    ...cpoMount('2.1.1'),
    ...cpoMount('2.2.1'),
    ...emspMount('2.1.1'),
    ...emspMount('2.2.1'),
    ...overviewMount(),
  ];
}

// ---------------------------------------------------------------------------------------------
// requests

interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** the parsed body; undefined when it is not JSON */
  json: unknown;
}

const name = (x: Endpoint): string => `${x.method} ${x.path}`;

/** The mount a path belongs to: `/ocpi/cpo/2.1.1`, ..., or the overview `/ocpi/2.2.1`. */
function mountOf(path: string): string {
  return /^\/ocpi\/(cpo|emsp)\/[0-9.]+/.exec(path)?.[0] ?? '/ocpi/2.2.1';
}

function fill(template: string, params: Params): string {
  return template.replace(/\{([a-z_]+)\}/g, (_, key: string) => {
    const value = params[key];
    if (value === undefined) throw new Error(`no value for {${key}} in ${template}`);
    return encodeURIComponent(value);
  });
}

function statusCodeOf(r: Reply): unknown {
  return (r.json as { status_code?: unknown } | undefined)?.status_code;
}

function brief(r: Reply): string {
  return `${r.status} ${r.text.slice(0, 300)}`;
}

describe('OCPI endpoint sweep: every endpoint of every mount against the specification', function () {
  this.timeout(60_000);
  const spec = new OcpiSpec();
  const table = routeTable();
  let target: OcpiTarget;
  let api: OcpiApi;
  let w: World;
  let openapi: Map<string, Method[]>;

  /** A request as a partner sends it: 2.1.1 takes the token as it is, 2.2.1 in base64. */
  async function send(
    method: string,
    path: string,
    opts: { token?: string; version?: SpecVersion | 'raw'; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<Reply> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token !== undefined)
      headers.Authorization = `Token ${opts.version === '2.2.1' ? base64(opts.token) : opts.token}`;
    if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(`${api.url()}${path}`, {
      method,
      headers,
      redirect: 'manual',
      ...(opts.body === undefined ? {} : { body: JSON.stringify(opts.body) }),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? (JSON.parse(text) as unknown) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  }

  /** The partner that may call `x` (an eMSP for our CPO side, a CPO for our eMSP side). */
  const callerOf = (x: Endpoint): RegisteredPartner => (x.side === 'CPO' ? w.emsp : w.cpo);
  /** A partner of the role `x` refuses. */
  const wrongRoleOf = (x: Endpoint): RegisteredPartner => (x.side === 'CPO' ? w.cpo2 : w.emsp2);
  const encodingOf = (x: Endpoint): SpecVersion | 'raw' => (x.kind === 'versions' ? 'raw' : x.version);

  /** Path parameters for a caller of `party`: its own identity, unknown ids. */
  function paramsFor(party: PartyOf, extra: Params = {}): Params {
    return {
      ...party,
      location_id: MISSING,
      evse_uid: MISSING,
      connector_id: MISSING,
      session_id: MISSING,
      tariff_id: MISSING,
      token_uid: MISSING,
      cdr_id: MISSING,
      command: 'START_SESSION',
      uid: MISSING,
      version: '2.2.1',
      ...extra,
    };
  }

  /** Sends `x` as `caller`, for `party` (path and body), with the endpoint's valid body. */
  function call(x: Endpoint, caller: RegisteredPartner | null, party: PartyOf, extra: Params = {}): Promise<Reply> {
    const body =
      x.kind === 'credentials' ? (x.method === 'GET' || x.method === 'DELETE' ? undefined : {}) : x.body?.(party);
    return send(x.method, fill(x.path, paramsFor(party, extra)), {
      ...(caller ? { token: caller.token } : {}),
      version: encodingOf(x),
      body,
    });
  }

  /** Problems of an error answer: an OCPI envelope with a client error code (2xxx). */
  function clientErrorProblems(x: Endpoint, r: Reply): string[] {
    const problems = spec.envelopeProblems(x.version, r.json);
    const code = statusCodeOf(r);
    if (typeof code !== 'number' || code < 2000 || code > 2999) problems.push(`status_code ${String(code)} is no 2xxx`);
    return problems;
  }

  function openapiHas(path: string): boolean {
    return [...openapi.keys()].some((template) =>
      new RegExp(`^${template.replace(/\{[a-z_]+\}/g, '[^/]+')}/?$`).test(path),
    );
  }

  before(async () => {
    // the sweep sends hundreds of requests without a token or with a wrong one from one address:
    // the back-off on failed authentications (test/embedded/gateway-hardening.test.ts) is off here
    target = await embeddedTarget({ HTTP_AUTH_FAILURES: '0' });
    api = new OcpiApi(target);
    const doc = await send('GET', '/openapi.json');
    openapi = new Map(
      Object.entries((doc.json as { paths: Record<string, Record<string, unknown>> }).paths)
        .filter(([path]) => path.startsWith('/ocpi/'))
        .map(([path, ops]) => [path, Object.keys(ops).map((m) => m.toUpperCase() as Method)]),
    );
    const commandCpo = async (version: SpecVersion) =>
      api.register('CPO', `/ocpi/emsp/${version}/credentials`, {
        versions: [version],
        modules: [{ identifier: 'commands', role: 'RECEIVER' }],
        answer: () => (version === '2.1.1' ? { result: 'ACCEPTED' } : { result: 'ACCEPTED', timeout: 30 }),
      });
    w = {
      emsp: await api.register('EMSP'),
      cpo: await api.register('CPO'),
      emsp2: await api.register('EMSP'),
      cpo2: await api.register('CPO'),
      commandCpo: { '2.1.1': await commandCpo('2.1.1'), '2.2.1': await commandCpo('2.2.1') },
      commandUid: {},
    };
    await ourData();
  });
  after(async () => {
    await target.stop();
  });

  /** Our own data, three of each listed kind, made where the platform makes it. */
  async function ourData(): Promise<void> {
    // /v1 is the operator's surface (Bearer key, which api.request adds)
    const put = async (path: string, body: unknown) => {
      const res = await api.request('PUT', path, { body });
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    };
    for (const i of [1, 2, 3]) {
      const evse = anEvse({
        uid: `SW-OWN-E${i}`,
        capabilities: ['CHARGING_PROFILE_CAPABLE', 'RFID_READER'],
        connectors: [aConnector({ id: '1' })],
      });
      await put(
        `/v1/ocpi/locations/SW-OWN-${i}`,
        aLocation({ id: `SW-OWN-${i}`, coordinates: COORDINATES, evses: [evse] }),
      );
      await put(`/v1/ocpi/tariffs/SW-OT-${i}`, aTariff221({ id: `SW-OT-${i}` }));
      await put(`/v1/ocpi/tokens/NL/EVP/SW-TOK-${i}`, aToken221({ uid: `SW-TOK-${i}` }));
    }
    // our sessions and CDRs come from the charge points' side; written where it writes them
    if (!target.platform) throw new Error('the sweep needs the embedded platform');
    const ctx = new OcpiContext(target.platform.platform.services);
    for (const i of [1, 2, 3]) {
      const token = { ...w.emsp.party, uid: `SW-U-${i}`, type: 'RFID', contract_id: `SW-C-${i}` };
      const at = { location_id: 'SW-OWN-1', evse_uid: 'SW-OWN-E1', connector_id: '1', cdr_token: token };
      const id = `SW-OS-${i}`;
      await ctx.stores.sessions.put({ ...OUR, id }, aSession221({ id, ...at }) as unknown as StoredSession, {
        audience: w.emsp.party,
      });
      const cdr = aCdr221({
        id: `SW-OC-${i}`,
        cdr_token: token,
        cdr_location: { ...cdrLocation221(), id: 'SW-OWN-1', evse_uid: 'SW-OWN-E1' },
      });
      await ctx.stores.cdrs.put({ ...OUR, id: `SW-OC-${i}` }, cdr as unknown as StoredCdr, { audience: w.emsp.party });
    }
    // commands we sent, whose results the CPOs post to the URLs we gave
    for (const [mount, version] of [
      ['/ocpi/emsp/2.1.1', '2.1.1'],
      ['/ocpi/emsp/2.2.1', '2.2.1'],
      ['/ocpi/2.2.1', '2.2.1'],
    ] as const) {
      const partner = w.commandCpo[version];
      const res = await api.request('POST', `/v1/partners/${partner.id}/commands/START_SESSION`, {
        body: { token_uid: 'SW-TOK-1', location_id: 'THEIR-LOC', evse_uid: 'THEIR-EVSE' },
      });
      if (res.status !== 201) throw new Error(`sending a command: ${res.status} ${JSON.stringify(res.body)}`);
      const sent = partner.fake.received.at(-1) as ReceivedRequest;
      const url = (sent.body as { response_url: string }).response_url;
      w.commandUid[mount] = url.split('/').at(-1) ?? '';
    }
  }

  it('has one row per OpenAPI route, and discovery (versions, version details) reaches every route', async () => {
    const failures: string[] = [];
    const rows = new Set(table.map(name));
    for (const [path, methods] of openapi)
      for (const method of methods)
        if (!rows.has(`${method} ${path}`)) failures.push(`${method} ${path}: in /openapi.json, not in the sweep`);
    for (const x of table)
      if (!openapi.get(x.path)?.includes(x.method)) failures.push(`${name(x)}: in the sweep, not in /openapi.json`);

    // what a partner finds: the versions URLs, each version's details, each module URL
    const found = new Set<string>();
    for (const [versions, caller] of [
      ['/ocpi/cpo/versions', w.emsp],
      ['/ocpi/emsp/versions', w.cpo],
      ['/ocpi/2.2.1/versions', w.cpo],
      ['/ocpi/2.2.1/versions', w.emsp],
    ] as const) {
      found.add(versions);
      const list = await send('GET', versions, { token: caller.token });
      const listed = (list.json as { data?: Array<{ url: string }> } | undefined)?.data ?? [];
      if (list.status !== 200 || listed.length === 0) failures.push(`GET ${versions}: ${brief(list)}`);
      for (const v of listed) {
        const details = new URL(v.url).pathname;
        found.add(details);
        const version = details.includes('2.1.1') ? '2.1.1' : '2.2.1';
        const res = await send('GET', details, { token: caller.token, version });
        const endpoints = (res.json as { data?: { endpoints?: Array<{ url: string }> } } | undefined)?.data?.endpoints;
        if (res.status !== 200 || !endpoints) failures.push(`GET ${details}: ${brief(res)}`);
        for (const e of endpoints ?? []) found.add(new URL(e.url).pathname);
      }
    }
    for (const path of openapi.keys()) {
      const concrete = fill(path, paramsFor(OUR));
      const reached = [...found].some((url) => path === url || concrete === url || path.startsWith(`${url}/`));
      if (!reached) failures.push(`${path}: no versions URL, version details or module URL leads to it`);
    }
    for (const url of found)
      if (![...openapi.keys()].some((path) => path === url || path.startsWith(`${url}/`) || openapiHas(url)))
        failures.push(`${url}: discovered, but no route in /openapi.json serves it`);
    expect(failures, failures.join('\n')).to.deep.equal([]);
  });

  it('lists in the version details of every mount only URLs that answer (never a bare router 404, never 5xx)', async () => {
    const failures: string[] = [];
    const ownerIsCpo = (module: string) => ['locations', 'sessions', 'cdrs', 'tariffs'].includes(module);
    const details: Array<[string, RegisteredPartner]> = [
      ['/ocpi/cpo/2.1.1', w.emsp],
      ['/ocpi/cpo/2.2.1', w.emsp],
      ['/ocpi/emsp/2.1.1', w.cpo],
      ['/ocpi/emsp/2.2.1', w.cpo],
      ['/ocpi/2.2.1/versions/2.2.1', w.cpo],
      ['/ocpi/2.2.1/versions/2.1.1', w.cpo],
      ['/ocpi/2.2.1/versions/2.1.1', w.emsp],
    ];
    for (const [path, caller] of details) {
      const version: SpecVersion = path.endsWith('2.1.1') ? '2.1.1' : '2.2.1';
      const res = await send('GET', path, { token: caller.token, version });
      const problems = spec.envelopeProblems(version, res.json, { name: 'VersionDetails' });
      if (res.status !== 200 || problems.length > 0) failures.push(`GET ${path}: ${problems.join('; ')} ${brief(res)}`);
      const endpoints =
        (res.json as { data?: { endpoints?: Array<{ identifier: string; role?: string; url: string }> } } | undefined)
          ?.data?.endpoints ?? [];
      for (const endpoint of endpoints) {
        const url = new URL(endpoint.url).pathname;
        const mountSide = url.startsWith('/ocpi/cpo/') ? 'CPO' : url.startsWith('/ocpi/emsp/') ? 'EMSP' : undefined;
        // 2.2.1 names the interface; 2.1.1 has one interface per module and mount
        const sender =
          endpoint.role !== undefined
            ? endpoint.role === 'SENDER'
            : (mountSide === 'CPO') === ownerIsCpo(endpoint.identifier);
        const side: Side =
          endpoint.identifier === 'credentials'
            ? 'ANY'
            : endpoint.role !== undefined
              ? sender === ownerIsCpo(endpoint.identifier)
                ? 'CPO'
                : 'EMSP'
              : (mountSide ?? 'ANY');
        const label = `${path} lists ${endpoint.identifier}${endpoint.role ? ` ${endpoint.role}` : ''} ${url}`;
        if (mountSide && side !== 'ANY' && side !== mountSide)
          failures.push(`${label}: that interface belongs to our ${side} side, not to the ${mountSide} mount`);
        const who = side === 'CPO' ? w.emsp : side === 'EMSP' ? w.cpo : mountSide === 'CPO' ? w.emsp : w.cpo;
        const v: SpecVersion = url.includes('/2.1.1') ? '2.1.1' : '2.2.1';
        const lists = ['locations', 'sessions', 'cdrs', 'tariffs', 'tokens'].includes(endpoint.identifier);
        // what a partner does with the URL: GET a Sender's list, GET an object from a Receiver
        // (one it does not hold here: an OCPI 404), POST a command or its result
        let probe: { method: Method; path: string; body?: unknown; found: boolean };
        if (endpoint.identifier === 'credentials') probe = { method: 'GET', path: url, found: true };
        else if (endpoint.identifier === 'commands')
          probe = sender
            ? { method: 'POST', path: `${url}/START_SESSION/${MISSING}`, body: { result: 'ACCEPTED' }, found: false }
            : {
                method: 'POST',
                path: `${url}/STOP_SESSION`,
                body: commandBodies(v).STOP_SESSION?.(who.party),
                found: true,
              };
        else if (sender && lists)
          probe = { method: 'GET', path: `${url}?date_from=${encodeURIComponent(FROM)}`, found: true };
        else {
          const { country_code, party_id } = who.party;
          probe = { method: 'GET', path: `${url}/${country_code}/${party_id}/${MISSING}`, found: false };
        }
        const res = await send(probe.method, probe.path, { token: who.token, version: v, body: probe.body });
        const request = `${probe.method} ${probe.path}`;
        const envelope = spec.envelopeProblems(v, res.json);
        if (res.status >= 500) failures.push(`${label}: ${request}: ${brief(res)}`);
        else if (envelope.length > 0)
          failures.push(`${label}: ${request}: not an OCPI envelope (${envelope.join('; ')}): ${brief(res)}`);
        else if (!openapiHas(probe.path.split('?')[0] ?? ''))
          failures.push(`${label}: ${request}: no route serves it (the answer comes from the router): ${brief(res)}`);
        else if (probe.found && res.status !== 200) failures.push(`${label}: ${request}: ${brief(res)}`);
        else if (!probe.found && (res.status !== 404 || !/^2\d{3}$/.test(String(statusCodeOf(res)))))
          failures.push(`${label}: ${request}: a missing object is not an OCPI 404/2xxx: ${brief(res)}`);
      }
    }
    expect(failures, failures.join('\n')).to.deep.equal([]);
  });

  it('answers 401 with an OCPI envelope to every request without a token or with an unknown one', async () => {
    // transport_and_format (both versions) "Authorization header": a missing header or an unknown
    // token SHALL be answered with HTTP 401; the spec fixes no status_code, a client error (2xxx) is
    // what status_codes describes for "the client did something wrong"
    const failures: string[] = [];
    // the service's contract lists the overview's /versions and /versions/{version} without
    // parameters and with status 200 only: they are open (docs/OCPI.md "Mounts")
    const open = (x: { path: string }) =>
      x.path === '/ocpi/2.2.1/versions' || x.path === '/ocpi/2.2.1/versions/{version}';
    for (const x of table.filter((e) => !open(e))) {
      for (const token of [undefined, 'sweep-unknown-token']) {
        const res = await send(x.method, fill(x.path, paramsFor(w.cpo.party)), {
          ...(token ? { token } : {}),
          version: encodingOf(x),
          body: x.body?.(w.cpo.party) ?? (x.method === 'GET' || x.method === 'DELETE' ? undefined : {}),
        });
        const problems = clientErrorProblems(x, res);
        if (res.status !== 401) problems.unshift(`HTTP ${res.status}, not 401`);
        if (problems.length > 0)
          failures.push(`${name(x)} ${token ? 'unknown token' : 'no token'}: ${problems.join('; ')}: ${brief(res)}`);
      }
    }
    expect(failures, failures.join('\n')).to.deep.equal([]);
  });

  it('answers 401 to Token A of an unregistered partner everywhere but versions and credentials', async () => {
    // 2.2.1 transport_and_format "Authorization header": CREDENTIALS_TOKEN_A on another module than
    // credentials or versions SHALL be answered with HTTP 401
    const failures: string[] = [];
    const onboarded = async (role: 'CPO' | 'EMSP') => {
      const party = uniqueParty('BE');
      return { party, token: (await api.onboard(party, role)).token };
    };
    const tokenA = { EMSP: await onboarded('EMSP'), CPO: await onboarded('CPO') };
    for (const x of table) {
      const { party, token } = tokenA[x.side === 'CPO' ? 'EMSP' : 'CPO'];
      // a body valid for the party, so that only the token is wrong; never a valid credentials body:
      // that would register the partner
      const body =
        x.kind === 'credentials' ? (x.method === 'GET' || x.method === 'DELETE' ? undefined : {}) : x.body?.(party);
      const res = await send(x.method, fill(x.path, paramsFor(party)), { token, version: encodingOf(x), body });
      const configuration = x.kind === 'versions' || x.kind === 'details' || x.kind === 'credentials';
      if (configuration && res.status === 401) failures.push(`${name(x)}: Token A refused: ${brief(res)}`);
      if (!configuration && (res.status !== 401 || clientErrorProblems(x, res).length > 0))
        failures.push(`${name(x)}: Token A not answered with 401 and an envelope: ${brief(res)}`);
    }
    expect(failures, failures.join('\n')).to.deep.equal([]);
  });

  it('answers 403 with an OCPI envelope to a partner of the role the endpoint does not serve', async () => {
    const failures: string[] = [];
    for (const x of table.filter((e) => e.side !== 'ANY')) {
      const caller = wrongRoleOf(x);
      const res = await call(x, caller, caller.party);
      const problems = clientErrorProblems(x, res);
      if (res.status !== 403 || problems.length > 0) failures.push(`${name(x)}: ${problems.join('; ')} ${brief(res)}`);
    }
    expect(failures, failures.join('\n')).to.deep.equal([]);
  });

  it('answers the identity mismatch (2001, value_error.identity_mismatch) on every path naming another party', async () => {
    const failures: string[] = [];
    for (const x of table.filter((e) => e.path.includes('{country_code}'))) {
      const caller = callerOf(x);
      // a registered party of the same role: it exists, it is just not the caller
      const other = caller === w.emsp ? w.emsp2.party : w.cpo2.party;
      const res = await call(x, caller, other);
      const errors = (res.json as { errors?: Array<Record<string, unknown>> } | undefined)?.errors;
      const problems = clientErrorProblems(x, res);
      if (statusCodeOf(res) !== 2001) problems.push('status_code is not 2001');
      if (res.status !== 200) problems.push(`HTTP ${res.status}, not 200`);
      if (errors?.[0]?.field !== 'country_code' || errors[0].type !== 'value_error.identity_mismatch')
        problems.push('no errors[0] {field: country_code, type: value_error.identity_mismatch}');
      if (problems.length > 0) failures.push(`${name(x)}: ${problems.join('; ')}: ${brief(res)}`);
    }
    expect(failures, failures.join('\n')).to.deep.equal([]);
  });

  it('answers 405 with an Allow header and an OCPI envelope to a method a path does not serve', async () => {
    const failures: string[] = [];
    const paths = new Map<string, Endpoint>();
    for (const x of table) if (!paths.has(x.path)) paths.set(x.path, x);
    for (const [path, x] of paths) {
      const served = table.filter((e) => e.path === path).map((e) => e.method);
      for (const method of (['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const).filter((m) => !served.includes(m))) {
        const caller = callerOf(x);
        const res = await send(method, fill(path, paramsFor(caller.party)), {
          token: caller.token,
          version: encodingOf(x),
          ...(method === 'GET' || method === 'DELETE' ? {} : { body: {} }),
        });
        const allow = (res.headers.get('allow') ?? '').split(',').map((m) => m.trim());
        const problems = clientErrorProblems(x, res);
        if (res.status !== 405) problems.push(`HTTP ${res.status}`);
        if (!served.every((m) => allow.includes(m)) || allow.includes(method))
          problems.push(`Allow: ${res.headers.get('allow')} (serves ${served.join(', ')})`);
        if (problems.length > 0) failures.push(`${method} ${path}: ${problems.join('; ')}: ${brief(res)}`);
      }
    }
    expect(failures, failures.join('\n')).to.deep.equal([]);
  });

  it('answers 422 {detail: [{loc, msg, type}]} to a bad body, query or path, and takes ids of the maximum length', async () => {
    const failures: string[] = [];
    const validation = (x: Endpoint, label: string, res: Reply, loc0: string) => {
      const detail = (res.json as { detail?: unknown } | undefined)?.detail;
      const entries = Array.isArray(detail) ? (detail as Array<Record<string, unknown>>) : [];
      const shaped = entries.every(
        (d) => Array.isArray(d.loc) && typeof d.msg === 'string' && typeof d.type === 'string',
      );
      if (
        res.status !== 422 ||
        entries.length === 0 ||
        !shaped ||
        !entries.some((d) => (d.loc as unknown[])[0] === loc0)
      )
        failures.push(`${name(x)} ${label}: ${brief(res)}`);
    };
    for (const x of table) {
      const caller = callerOf(x);
      if (x.bad !== undefined) {
        const res = await send(x.method, fill(x.path, paramsFor(caller.party)), {
          token: caller.token,
          version: encodingOf(x),
          body: x.bad,
        });
        validation(x, `body ${JSON.stringify(x.bad)}`, res, 'body');
      }
      if (x.kind === 'list') {
        const res = await send('GET', `${x.path}?limit=-1`, { token: caller.token, version: encodingOf(x) });
        validation(x, '?limit=-1', res, 'query');
      }
      for (const [, param] of x.path.matchAll(/\{([a-z_]+)\}/g)) {
        const max = param ? ID_MAX[x.version][param] : undefined;
        if (!param || max === undefined) continue;
        const tooLong = await call(x, caller, caller.party, { [param]: 'M'.repeat(max + 1) });
        validation(x, `{${param}} of ${max + 1} characters`, tooLong, 'path');
        if (x.method !== 'GET' && x.method !== 'DELETE') continue;
        // the longest id the spec allows is an id like any other: unknown here, not invalid
        const longest = await call(x, caller, caller.party, { [param]: 'M'.repeat(max) });
        if (longest.status === 422 || longest.status >= 500)
          failures.push(`${name(x)} {${param}} of ${max} characters (the spec's maximum) refused: ${brief(longest)}`);
      }
    }
    expect(failures, failures.join('\n')).to.deep.equal([]);
  });

  it('pages every list with X-Total-Count, X-Limit and Link rel="next" (keeping the filters) until the end', async () => {
    const failures: string[] = [];
    for (const x of table.filter((e) => e.kind === 'list')) {
      const caller = callerOf(x);
      let next: string | undefined = `${x.path}?date_from=${encodeURIComponent(FROM)}&limit=2`;
      let seen = 0;
      let pages = 0;
      let total: number | undefined;
      while (next && pages < 10) {
        pages += 1;
        const res = await send('GET', next, { token: caller.token, version: encodingOf(x) });
        const problems = spec.envelopeProblems(x.version, res.json, x.data ? { name: x.data, list: true } : undefined);
        const items = (res.json as { data?: unknown[] } | undefined)?.data ?? [];
        const count = Number(res.headers.get('x-total-count'));
        const limit = Number(res.headers.get('x-limit'));
        const link = res.headers.get('link');
        if (res.status !== 200) problems.push(`HTTP ${res.status}`);
        if (!Number.isInteger(count) || res.headers.get('x-total-count') === null) problems.push('no X-Total-Count');
        if (!Number.isInteger(limit) || limit < 1 || res.headers.get('x-limit') === null) problems.push('no X-Limit');
        else if (items.length > limit) problems.push(`${items.length} objects over X-Limit ${limit}`);
        total ??= count;
        seen += items.length;
        const nextUrl = link ? /^<([^>]+)>;\s*rel="next"$/.exec(link)?.[1] : undefined;
        if (link && !nextUrl) problems.push(`Link is not <url>; rel="next": ${link}`);
        if (nextUrl && !nextUrl.includes('date_from=')) problems.push(`Link drops the date_from filter: ${link}`);
        if (!link && seen < count) problems.push(`no Link rel="next" though ${count - seen} objects remain`);
        if (link && seen >= count) problems.push(`a Link rel="next" after the last object: ${link}`);
        if (problems.length > 0) {
          failures.push(`${name(x)} page ${pages} (${next}): ${problems.join('; ')}: ${brief(res)}`);
          break;
        }
        next = nextUrl ? `${new URL(nextUrl).pathname}${new URL(nextUrl).search}` : undefined;
      }
      // three of each were made; a list that shows fewer does not page at all here
      if (total !== undefined && total < 3) failures.push(`${name(x)}: X-Total-Count ${total}, expected at least 3`);
      if (total !== undefined && seen !== total)
        failures.push(`${name(x)}: the pages hold ${seen} objects, X-Total-Count says ${total}`);
    }
    expect(failures, failures.join('\n')).to.deep.equal([]);
  });

  it('answers every successful request with a body that conforms to the spec schema of its version (and 2.2.1 headers)', async () => {
    const failures: string[] = [];
    // test data first: a body the spec refuses would blame the platform for the test's mistake
    for (const x of table) {
      if (!x.bodyIs) continue;
      const problems = spec.problems(x.version, x.bodyIs, x.body?.(w.cpo.party));
      if (problems.length > 0)
        failures.push(`${name(x)}: the sweep's own body is not spec-valid: ${problems.join('; ')}`);
    }
    const rank: Record<Method, number> = { PUT: 0, POST: 1, PATCH: 2, GET: 3, DELETE: 4 };
    const runs = table
      .filter((x) => x.kind !== 'credentials' || x.method === 'GET')
      .sort((a, b) => rank[a.method] - rank[b.method] || a.path.split('/').length - b.path.split('/').length);
    for (const [i, x] of runs.entries()) {
      const ok = x.ok ?? {};
      const caller = ok.as?.(w) ?? callerOf(x);
      const params = { ...paramsFor(caller.party), ...ok.params };
      if (x.path.endsWith('/{command}/{uid}')) params.uid = w.commandUid[mountOf(x.path)] ?? MISSING;
      const query = x.kind === 'list' ? `?date_from=${encodeURIComponent(FROM)}` : '';
      const path = `${fill(x.path, params)}${query}`;
      const body = ok.body?.(w) ?? x.body?.(caller.party);
      // 2.2.1 transport_and_format "Unique message IDs" (the response carries the request's
      // X-Request-ID and X-Correlation-ID) and "Message Routing Headers" (a response of a functional
      // module is addressed to the requesting party, from the answering one)
      const functional = x.version === '2.2.1' && ['list', 'object', 'call'].includes(x.kind);
      const ids = {
        'X-Request-ID': `sweep-req-${i}`,
        'X-Correlation-ID': `sweep-corr-${i}`,
      };
      const res = await send(x.method, path, {
        token: caller.token,
        version: encodingOf(x),
        body,
        ...(functional ? { headers: ids } : {}),
      });
      const statuses = ok.status ?? [200];
      const list = x.kind === 'list' || x.kind === 'versions';
      const problems = spec.envelopeProblems(x.version, res.json, x.data ? { name: x.data, list } : undefined);
      if (!statuses.includes(res.status)) problems.push(`HTTP ${res.status}, expected ${statuses.join(' or ')}`);
      if (statusCodeOf(res) !== 1000) problems.push(`status_code ${String(statusCodeOf(res))}, not 1000`);
      if (functional) {
        const header = (h: string) => res.headers.get(h)?.toUpperCase();
        for (const [h, value] of Object.entries(ids))
          if (res.headers.get(h) !== value) problems.push(`${h} ${res.headers.get(h)}, sent ${value}`);
        if (
          header('ocpi-to-country-code') !== caller.party.country_code ||
          header('ocpi-to-party-id') !== caller.party.party_id
        )
          problems.push(`OCPI-to-* ${header('ocpi-to-country-code')}/${header('ocpi-to-party-id')}, not the caller`);
        if (header('ocpi-from-country-code') !== OUR.country_code || header('ocpi-from-party-id') !== OUR.party_id)
          problems.push(`OCPI-from-* ${header('ocpi-from-country-code')}/${header('ocpi-from-party-id')}, not ours`);
      }
      if (x.path.endsWith('/cdrs') && x.method === 'POST' && !res.headers.get('location'))
        problems.push('no Location header (mod_cdrs POST "Response Headers": required)');
      if (problems.length > 0)
        failures.push(`${name(x)} (${x.method} ${path}): ${problems.slice(0, 6).join('; ')}: ${brief(res)}`);
    }
    expect(failures, failures.join('\n')).to.deep.equal([]);
  });

  it('runs the credentials module of every mount as the spec has it: POST once, PUT, DELETE, then 405', async () => {
    // credentials (both versions): POST registers and answers our Credentials; POST again, PUT or
    // DELETE by a party that is not registered "MUST return HTTP status code 405: method not allowed"
    const failures: string[] = [];
    const mounts: Array<[string, SpecVersion, 'CPO' | 'EMSP']> = [
      ['/ocpi/cpo/2.1.1', '2.1.1', 'EMSP'],
      ['/ocpi/cpo/2.2.1', '2.2.1', 'EMSP'],
      ['/ocpi/emsp/2.1.1', '2.1.1', 'CPO'],
      ['/ocpi/emsp/2.2.1', '2.2.1', 'CPO'],
      ['/ocpi/2.2.1', '2.2.1', 'CPO'],
    ];
    for (const [mount, version, role] of mounts) {
      const path = `${mount}/credentials`;
      const party = uniqueParty('BE');
      const { token: tokenA } = await api.onboard(party, role);
      const fake = await target.partner(`B-${party.party_id}-${Date.now()}`);
      const theirs = (token: string) =>
        version === '2.1.1'
          ? credentials211(party, token, fake.versionsUrl)
          : credentials221(party, token, fake.versionsUrl, role);
      const step = async (label: string, method: Method, token: string, body: unknown, expectStatus: number) => {
        const res = await send(method, path, { token, version, ...(body === undefined ? {} : { body }) });
        const problems =
          expectStatus === 200
            ? spec.envelopeProblems(version, res.json, method === 'DELETE' ? undefined : { name: 'Credentials' })
            : spec.envelopeProblems(version, res.json);
        if (res.status !== expectStatus) problems.push(`HTTP ${res.status}, expected ${expectStatus}`);
        if (problems.length > 0) failures.push(`${method} ${path} (${label}): ${problems.join('; ')}: ${brief(res)}`);
        return (res.json as { data?: { token?: string } } | undefined)?.data?.token;
      };
      await step('not registered yet', 'PUT', tokenA, theirs(fake.token), 405);
      const tokenC = (await step('register', 'POST', tokenA, theirs(fake.token), 200)) ?? tokenA;
      await step('already registered', 'POST', tokenC, theirs(fake.token), 405);
      const tokenC2 = (await step('update', 'PUT', tokenC, theirs(fake.token), 200)) ?? tokenC;
      await step('read', 'GET', tokenC2, undefined, 200);
      await step('unregister', 'DELETE', tokenC2, undefined, 200);
      // unregistered, the token no longer identifies a party: 401 (or 405 per credentials) both fit
      const again = await send('DELETE', path, { token: tokenC2, version });
      if (again.status !== 401 && again.status !== 405)
        failures.push(`DELETE ${path} (after unregistering): ${brief(again)}`);
    }
    expect(failures, failures.join('\n')).to.deep.equal([]);
  });
});
