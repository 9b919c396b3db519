import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Prng } from '../../scripts/prng.js';
import { eventually } from '../support/eventually.js';
import type { Frame, TestCharger } from './support/charger.js';
import { startCsms, type CsmsUnderTest, type RegisteredChargePoint } from './support/csms.js';
import { v16, v201 } from './support/messages.js';
import { encodeFrame, RawClient, type FrameSpec } from './support/raw-socket.js';
import { connectedCharger } from './support/scenario.js';

/**
 * Issue 7, OCPP fuzz (bounded form for CI): per version, generated bad input at the WebSocket
 * layer (each case on a fresh authenticated connection) and at the RPC layer (one connection),
 * then a flood. Asserted: the process keeps serving (/healthz 200, never a 5xx), every bad call
 * gets a CALLERROR that is not InternalError, every bad frame closes only its own connection
 * with the RFC 6455 code, and a well-behaved charger of the same version keeps working. Seeded:
 * OCPP_FUZZ_SEED replays a run. The figures are printed at the end (docs/RELIABILITY.md).
 */
const SEED = Number(process.env.OCPP_FUZZ_SEED ?? 20261123);
const WS_CASES = 80;
const RPC_CASES = 300;
const FLOOD = 1000;

type Version = 'ocpp1.6' | 'ocpp2.0.1';

/** frames tried and outcomes, by layer and kind, over both versions */
const tried = new Map<string, number>();
const outcomes = new Map<string, number>();
const httpStatuses = new Map<number, number>();

function count(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

// ---- WebSocket layer -------------------------------------------------------------------------

const INVALID_UTF8 = [
  [0xff],
  [0x80],
  [0xc0, 0x80],
  [0xed, 0xa0, 0x80],
  [0xe2, 0x28, 0xa1],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
];

interface WsCase {
  kind: string;
  frames: FrameSpec[];
  /** the close code, or 'callerror' when the frame is answered and the connection stays */
  expect: number | 'callerror';
}

function invalidUtf8(rng: Prng): Buffer {
  const text = Buffer.from(`[2,"${rng.word(1, 8)}","Heartbeat",{}]`);
  const at = rng.int(0, text.length);
  return Buffer.concat([text.subarray(0, at), Buffer.from(rng.pick(INVALID_UTF8)), text.subarray(at)]);
}

function closePayload(code: number, reason: Buffer = Buffer.alloc(0)): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(code, 0);
  return Buffer.concat([b, reason]);
}

const wsGenerators: Array<(rng: Prng) => WsCase> = [
  (rng) => ({ kind: 'invalid UTF-8 text', frames: [{ opcode: 1, payload: invalidUtf8(rng) }], expect: 1007 }),
  (rng) => {
    const bad = invalidUtf8(rng);
    const cut = rng.int(1, bad.length - 1);
    return {
      kind: 'invalid UTF-8 fragmented',
      frames: [
        { opcode: 1, payload: bad.subarray(0, cut), fin: false },
        { opcode: 0, payload: bad.subarray(cut) },
      ],
      expect: 1007,
    };
  },
  (rng) => ({
    kind: 'invalid UTF-8 close reason',
    frames: [{ opcode: 8, payload: closePayload(1000, Buffer.from(rng.pick(INVALID_UTF8))) }],
    expect: 1007,
  }),
  (rng) => ({
    kind: 'reserved opcode',
    frames: [{ opcode: rng.pick([3, 4, 5, 6, 7, 11, 12, 13, 14, 15]), payload: rng.bytes(rng.int(0, 20)) }],
    expect: 1002,
  }),
  (rng) => ({
    kind: 'fragmented control frame',
    frames: [{ opcode: rng.pick([8, 9, 10]), payload: rng.bytes(rng.int(0, 10)), fin: false }],
    expect: 1002,
  }),
  (rng) => ({
    kind: 'control frame over 125 bytes',
    frames: [{ opcode: rng.pick([9, 10]), payload: rng.bytes(rng.int(126, 300)) }],
    expect: 1002,
  }),
  (rng) => ({ kind: 'RSV bits set', frames: [{ opcode: 1, payload: '[]', rsv: rng.int(1, 7) }], expect: 1002 }),
  (rng) => ({
    kind: 'unmasked frame',
    frames: [{ opcode: rng.pick([1, 2, 9]), payload: rng.bytes(rng.int(0, 20)), masked: false }],
    expect: 1002,
  }),
  (rng) => ({
    kind: 'continuation without a start',
    frames: [{ opcode: 0, payload: rng.bytes(rng.int(0, 20)) }],
    expect: 1002,
  }),
  (rng) => ({
    kind: 'data frame inside a fragmented message',
    frames: [
      { opcode: 1, payload: '[2,', fin: false },
      { opcode: rng.pick([1, 2]), payload: '"x"]' },
    ],
    expect: 1002,
  }),
  (rng) => ({
    kind: 'invalid close code',
    frames: [{ opcode: 8, payload: closePayload(rng.pick([0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535])) }],
    expect: 1002,
  }),
  () => ({ kind: 'close frame of one byte', frames: [{ opcode: 8, payload: Buffer.from([0x03]) }], expect: 1002 }),
  (rng) => ({
    kind: 'oversized frame',
    frames: [
      {
        opcode: rng.pick([1, 2]),
        payload: rng.bytes(4),
        declaredLength:
          rng.next() < 0.5 ? BigInt(rng.int(256 * 1024 + 1, 50_000_000)) : 2n ** BigInt(rng.int(33, 63)) - 1n,
      },
    ],
    expect: 1009,
  }),
  (rng) => ({
    kind: 'binary frame',
    frames: [{ opcode: 2, payload: rng.bytes(rng.int(0, 200)) }],
    expect: 'callerror',
  }),
];

// ---- RPC layer ---------------------------------------------------------------------------------

interface MessageSpec {
  action: string;
  valid: () => Record<string, unknown>;
  required: string[][];
  /** string fields with a maxLength in the official schema, and that length */
  bounded: Array<[string[], number]>;
  strings: string[][];
}

const SPECS: Record<Version, MessageSpec[]> = {
  'ocpp1.6': [
    {
      action: 'BootNotification',
      valid: () => v16.boot(),
      required: [['chargePointVendor'], ['chargePointModel']],
      bounded: [
        [['chargePointVendor'], 50],
        [['firmwareVersion'], 255],
      ],
      strings: [['chargePointVendor'], ['chargePointModel']],
    },
    {
      action: 'StatusNotification',
      valid: () => v16.status(1),
      required: [['connectorId'], ['errorCode'], ['status']],
      bounded: [],
      strings: [['timestamp']],
    },
    {
      action: 'Authorize',
      valid: () => v16.authorize(),
      required: [['idTag']],
      bounded: [[['idTag'], 20]],
      strings: [['idTag']],
    },
    {
      action: 'StartTransaction',
      valid: () => v16.start(),
      required: [['connectorId'], ['idTag'], ['meterStart'], ['timestamp']],
      bounded: [[['idTag'], 20]],
      strings: [['idTag']],
    },
    {
      action: 'MeterValues',
      valid: () => v16.meterValues(1, undefined, 100),
      required: [['connectorId'], ['meterValue']],
      bounded: [],
      strings: [['meterValue', '0', 'sampledValue', '0', 'value']],
    },
  ],
  'ocpp2.0.1': [
    {
      action: 'BootNotification',
      valid: () => v201.boot(),
      required: [['chargingStation'], ['reason'], ['chargingStation', 'model']],
      bounded: [[['chargingStation', 'model'], 20]],
      strings: [['chargingStation', 'vendorName']],
    },
    {
      action: 'StatusNotification',
      valid: () => v201.status(1, 1),
      required: [['timestamp'], ['connectorStatus'], ['evseId']],
      bounded: [],
      strings: [['timestamp']],
    },
    {
      action: 'Authorize',
      valid: () => v201.authorize(),
      required: [['idToken'], ['idToken', 'type']],
      bounded: [[['idToken', 'idToken'], 36]],
      strings: [['idToken', 'idToken']],
    },
    {
      action: 'TransactionEvent',
      valid: () =>
        v201.transactionEvent({ eventType: 'Started', transactionId: 'FUZZ-1', seqNo: 0, idToken: 'TAG-1', wh: 0 }),
      required: [['eventType'], ['seqNo'], ['transactionInfo'], ['transactionInfo', 'transactionId']],
      bounded: [[['transactionInfo', 'transactionId'], 36]],
      strings: [
        ['idToken', 'idToken'],
        ['transactionInfo', 'transactionId'],
      ],
    },
  ],
};

/** Sets (or with `undefined` deletes) the value at a path of a fresh payload. */
function edit(payload: Record<string, unknown>, path: string[], value: unknown): Record<string, unknown> {
  let node: Record<string, unknown> = payload;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>; // the spec's paths exist in its valid payload
  const last = path[path.length - 1] ?? '';
  if (value === undefined) delete node[last];
  else node[last] = value;
  return payload;
}

function read(payload: Record<string, unknown>, path: string[]): unknown {
  let node: unknown = payload;
  for (const key of path) node = (node as Record<string, unknown>)[key]; // as in edit()
  return node;
}

/** JSON text nested `depth` levels deep (built as text: JSON.stringify itself recurses) */
function deep(depth: number, asObject: boolean): string {
  return asObject ? `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}` : `${'['.repeat(depth)}1${']'.repeat(depth)}`;
}

interface RpcCase {
  kind: string;
  text: string;
  /** the message id the CALLERROR must carry */
  id: string;
  /** too deep for JSON.parse: then the frame reads as not JSON, answered with id -1 */
  orUnreadable?: true;
}

function call(id: string, action: string, payload: unknown): string {
  return JSON.stringify([2, id, action, payload]);
}

function rpcGenerators(version: Version): Array<(rng: Prng) => RpcCase> {
  const spec = (rng: Prng) => rng.pick(SPECS[version]);
  const id = () => randomUUID();
  const mutation = (kind: string, make: (rng: Prng, s: MessageSpec) => Record<string, unknown>) => (rng: Prng) => {
    const s = spec(rng);
    const i = id();
    return { kind, id: i, text: call(i, s.action, make(rng, s)) };
  };
  return [
    (rng) => ({
      kind: 'not JSON',
      id: '-1',
      text: rng.pick(['{', '[2,', 'null,', '\u00ff\u00fe', '"unterminated', '[2,"a","B",{}]]']) + rng.word(0, 30),
    }),
    (rng) => ({
      kind: 'not an array',
      id: '-1',
      text: JSON.stringify(rng.pick([null, 1, 'x', true, {}, { a: [2, 'x', 'Heartbeat', {}] }, []])),
    }),
    // an answer frame too short ([3], [4, 'x']) is dropped unanswered: rpc-errors.test.ts
    (rng) => ({ kind: 'array too short', id: '-1', text: JSON.stringify(rng.pick([[2], [7], []])) }),
    // with a readable id, answered under it
    (rng) => ({
      kind: 'call too short',
      id: 'x',
      text: JSON.stringify(
        rng.pick([
          [2, 'x'],
          [2, 'x', 'Heartbeat'],
        ]),
      ),
    }),
    (rng) => ({
      kind: 'bad message id',
      id: '-1',
      text: JSON.stringify([2, rng.pick([null, 7, {}, [], '', 'x'.repeat(rng.int(37, 5000))]), 'Heartbeat', {}]),
    }),
    (rng) => {
      const i = id();
      return {
        kind: 'unknown message type',
        id: i,
        text: JSON.stringify([rng.pick([0, 1, 5, 99, -1, '2', null, 2.5, 1e308]), i, 'Heartbeat', {}]),
      };
    },
    (rng) => {
      const i = id();
      return {
        kind: 'CALL of wrong length',
        id: i,
        text: JSON.stringify(rng.next() < 0.5 ? [2, i, 'Heartbeat', {}, rng.word(1, 5)] : [2, i, 7]),
      };
    },
    (rng) => {
      const i = id();
      return {
        kind: 'unknown action',
        id: i,
        text: call(
          i,
          rng.pick([
            rng.word(1, 40),
            '../../etc/passwd',
            '',
            'Heartbeat ',
            'constructor',
            '__proto__',
            'x'.repeat(500),
          ]),
          {},
        ),
      };
    },
    mutation('required field missing', (rng, s) => edit(s.valid(), rng.pick(s.required), undefined)),
    mutation('wrong type', (rng, s) => {
      const path = rng.pick(s.required);
      const current = read(s.valid(), path);
      return edit(
        s.valid(),
        path,
        typeof current === 'string'
          ? rng.int(0, 9)
          : typeof current === 'number'
            ? rng.word(1, 5)
            : rng.pick([[], 'x', 3]),
      );
    }),
    mutation('unknown property', (rng, s) => edit(s.valid(), [`x${rng.word(1, 10)}`], rng.word(0, 5))),
    mutation('string over maxLength', (rng, s) => {
      const bounded = s.bounded.length > 0 ? rng.pick(s.bounded) : undefined;
      return bounded
        ? edit(s.valid(), bounded[0], 'L'.repeat(bounded[1] + rng.int(1, 2000)))
        : edit(s.valid(), rng.pick(s.required), { nested: 'x'.repeat(rng.int(1, 2000)) });
    }),
    mutation('NUL in a string', (rng, s) => {
      const path = rng.pick(s.strings);
      const text = String(read(s.valid(), path));
      const at = rng.int(0, text.length);
      return edit(s.valid(), path, `${text.slice(0, at)}\u0000${text.slice(at)}`.slice(0, 20));
    }),
    (rng) => {
      const i = id();
      // payload nested thousands of levels deep, as an object or an array, in place of the payload
      const text = `[2,${JSON.stringify(i)},"${rng.pick(['Heartbeat', 'BootNotification', 'Authorize'])}",${deep(rng.int(1000, 20_000), rng.next() < 0.5)}]`;
      return { kind: 'deep nesting', id: i, text, orUnreadable: true };
    },
    (rng) => {
      // as deep as fits the 256 KiB frame limit (a longer frame is closed with 1009, see above)
      const asObject = rng.next() < 0.5;
      return {
        kind: 'deep nesting of the frame',
        id: '-1',
        text: deep(rng.int(1000, asObject ? 40_000 : 120_000), asObject),
      };
    },
  ];
}

function errorOf(f: Frame): string | undefined {
  return f[0] === 4 ? f[2] : undefined;
}

async function healthz(csms: CsmsUnderTest): Promise<number> {
  const status = (await fetch(`${csms.url}/healthz`)).status;
  httpStatuses.set(status, (httpStatuses.get(status) ?? 0) + 1);
  return status;
}

describe('OCPP fuzz: bad frames and calls per version (seeded, bounded)', function () {
  this.timeout(30_000);
  let csms: CsmsUnderTest;
  let port: number;
  before(async () => {
    csms = await startCsms();
    port = Number(new URL(csms.url).port);
  });
  after(async () => {
    await csms.stop();
    const lines = [`OCPP fuzz figures (seed ${SEED}, both versions):`];
    for (const [kind, n] of [...tried.entries()].sort()) lines.push(`  tried   ${String(n).padStart(5)}  ${kind}`);
    for (const [outcome, n] of [...outcomes.entries()].sort())
      lines.push(`  outcome ${String(n).padStart(5)}  ${outcome}`);
    lines.push(
      `  /healthz answers: ${[...httpStatuses.entries()].map(([s, n]) => `${n} x ${s}`).join(', ')}; process exits: 0`,
    );
    console.log(lines.join('\n'));
  });

  for (const version of ['ocpp1.6', 'ocpp2.0.1'] as const) {
    describe(version, () => {
      const rng = new Prng(SEED + (version === 'ocpp1.6' ? 0 : 1));
      let good: { cp: RegisteredChargePoint; charger: TestCharger };
      let target: RegisteredChargePoint;
      before(async () => {
        good = await connectedCharger(csms, version);
        good.charger.answers = {
          RemoteStartTransaction: { status: 'Accepted' },
          RequestStartTransaction: { status: 'Accepted' },
        };
        await good.charger.call('BootNotification', version === 'ocpp1.6' ? v16.boot() : v201.boot());
        target = await csms.registerChargePoint(version);
      });
      after(async () => {
        // the well-behaved charger went through all of it and can still be started remotely
        const from = good.charger.received.length;
        expect(
          (
            await csms.api('POST', `/v1/charge-points/${good.cp.id}/remote-start`, {
              id_tag: 'TAG-1',
              connector_id: 1,
              evse_id: 1,
            })
          ).status,
        ).to.equal(200);
        await good.charger.waitFor(
          (f) => f[0] === 2 && /^(RemoteStart|RequestStart)Transaction$/.test(f[2]),
          5000,
          from,
        );
        await good.charger.close();
      });

      it(`WebSocket layer: ${WS_CASES} bad frames, each on its own connection, close it with its RFC 6455 code`, async () => {
        for (let i = 0; i < WS_CASES; i += 1) {
          const c = rng.pick(wsGenerators)(rng);
          count(tried, `ws: ${c.kind}`);
          const raw = await RawClient.upgraded(port, `/ocpp/${target.id}`, {
            protocol: version,
            user: target.username,
            password: target.password,
          });
          for (const f of c.frames) raw.write(encodeFrame(f));
          if (c.expect === 'callerror') {
            const answer = await eventually(async () => raw.texts()[0], { what: `${c.kind}: an answer` });
            const f = JSON.parse(answer) as Frame;
            expect(f[0], c.kind).to.equal(4);
            count(outcomes, `ws: ${c.kind} -> CALLERROR ${errorOf(f) ?? ''}`);
          } else {
            const code = await raw.closeCode();
            expect(code, c.kind).to.equal(c.expect);
            count(outcomes, `ws: ${c.kind} -> close ${code}`);
          }
          raw.destroy();
          if (i % 20 === 19) {
            expect(await healthz(csms)).to.equal(200);
            expect(await good.charger.call('Heartbeat', {})).to.have.property('currentTime');
          }
        }
      });

      it(`RPC layer: ${RPC_CASES} bad calls each get a CALLERROR (never InternalError) and the connection stays`, async () => {
        const { charger } = await connectedCharger(csms, version);
        const generators = rpcGenerators(version);
        for (let i = 0; i < RPC_CASES; i += 1) {
          const c = rng.pick(generators)(rng);
          count(tried, `rpc: ${c.kind}`);
          const from = charger.received.length;
          charger.ws.send(c.text);
          const answer = await charger
            .waitFor(
              (f) => (f[0] === 3 || f[0] === 4) && (f[1] === c.id || (c.orUnreadable === true && f[1] === '-1')),
              5000,
              from,
            )
            .catch((err: unknown) => {
              throw new Error(
                `${c.kind}: ${String(err)} for ${c.text.slice(0, 200)}; got ${JSON.stringify(charger.received.slice(from)).slice(0, 300)}`,
              );
            });
          const code = errorOf(answer);
          expect(code, `${c.kind}: ${c.text.slice(0, 200)}`)
            .to.be.a('string')
            .and.not.equal('InternalError');
          count(outcomes, `rpc: ${c.kind} -> CALLERROR ${code ?? ''}`);
          if (i % 50 === 49) {
            expect(await healthz(csms)).to.equal(200);
            expect(await good.charger.call('Heartbeat', {})).to.have.property('currentTime');
          }
        }
        expect(await charger.call('Heartbeat', {})).to.have.property('currentTime');
        await charger.close();
      });

      it(`flood: ${FLOOD} calls at once are all answered; past the calls-in-progress limit with GenericError`, async () => {
        const { charger } = await connectedCharger(csms, version);
        const ids = new Set<string>();
        const from = charger.received.length;
        for (let i = 0; i < FLOOD; i += 1) {
          const id = `flood-${i}`;
          ids.add(id);
          const r = rng.next();
          const [action, payload] =
            r < 0.4
              ? ['StatusNotification', version === 'ocpp1.6' ? v16.status(1) : v201.status(1, 1)]
              : r < 0.7
                ? ['Authorize', version === 'ocpp1.6' ? v16.authorize() : v201.authorize()]
                : r < 0.9
                  ? ['Heartbeat', {}]
                  : ['Authorize', version === 'ocpp1.6' ? v16.authorize('\u0000') : v201.authorize('\u0000')];
          count(tried, `flood: ${action}`);
          charger.ws.send(call(id, action, payload));
        }
        const answers = await eventually(
          async () => {
            const got = charger.received.slice(from).filter((f) => (f[0] === 3 || f[0] === 4) && ids.has(f[1]));
            return got.length >= FLOOD ? got : undefined;
          },
          { timeoutMs: 20_000, what: 'every flood call answered' },
        );
        for (const f of answers) count(outcomes, `flood -> ${f[0] === 3 ? 'CALLRESULT' : `CALLERROR ${f[2]}`}`);
        const codes = answers.map(errorOf);
        expect(codes).to.not.include('InternalError');
        expect(codes).to.include('GenericError');
        expect(await healthz(csms)).to.equal(200);
        expect(await charger.call('Heartbeat', {})).to.have.property('currentTime');
        expect(await good.charger.call('Heartbeat', {})).to.have.property('currentTime');
        await charger.close();
      });
    });
  }
});
