import { expect } from 'chai';
import { compileLazily } from '../../src/lazy-compile.js';
import { TransactionEndedEvent } from '../../src/ocpp/domain.js';
import { salvageEnded201, salvageStop16 } from '../../src/ocpp/salvage.js';

const now = new Date('2030-01-01T12:00:00.000Z');
const endedEvent = compileLazily(TransactionEndedEvent);

/** Any JSON a charger may send where a payload belongs, and a few shapes meant to trip a reader. */
function hostilePayloads(): unknown[] {
  const deep: unknown[] = [];
  let cur = deep;
  for (let i = 0; i < 10_000; i += 1) {
    const next: unknown[] = [];
    cur.push(next);
    cur = next;
  }
  return [
    null,
    true,
    0,
    'StopTransaction',
    [],
    deep,
    {},
    JSON.parse('{"__proto__": {"transactionId": 1}, "constructor": 5}'),
    { transactionId: 1e300, meterStop: Number.MAX_VALUE, timestamp: '9'.repeat(10_000) },
    { transactionId: -0, meterStop: 1.5, timestamp: '2030-13-45T99:99:99Z', reason: { toString: 1 } },
    { transactionId: '\u0000', reason: ['Local'] },
    { eventType: 'Ended', transactionInfo: [], meterValue: 'x' },
    { eventType: 'Ended', transactionInfo: { transactionId: 'x'.repeat(37) } },
    { eventType: 'Ended', transactionInfo: { transactionId: 'a\u0000b' } },
    {
      eventType: 'Ended',
      transactionInfo: { transactionId: 't' },
      meterValue: Array.from({ length: 5000 }, () => ({
        timestamp: '2030-01-01T10:00:00Z',
        sampledValue: [{ value: 1, unitOfMeasure: { multiplier: 400 } }, { value: 'x' }, null, deep],
      })),
    },
  ];
}

describe('transaction ends read from messages that failed their schema (src/ocpp/salvage.ts)', () => {
  it('never throws, and whatever it returns is a valid transaction-ended event', () => {
    for (const p of hostilePayloads()) {
      for (const event of [salvageStop16(p, now), salvageEnded201(p, now)]) {
        if (event) expect(endedEvent.Check(event), JSON.stringify(event)).to.equal(true);
      }
    }
  });

  it('1.6: needs an integer transactionId; an invalid meterStop, timestamp or reason is absent, arrival time or Other', () => {
    expect(salvageStop16({ transactionId: '7', meterStop: 10 }, now)).to.equal(null);
    expect(
      salvageStop16({ transactionId: 7, meterStop: 'abc', timestamp: 'yesterday', reason: 'Bogus' }, now),
    ).to.deep.equal({
      type: 'transaction-ended',
      transaction_id: '7',
      meter_wh: null,
      timestamp: now.toISOString(),
      reason: 'Other',
      seq_no: null,
      id_tag: null,
      salvaged: true,
    });
    expect(
      salvageStop16({ transactionId: 7, meterStop: 12, timestamp: '2030-01-01T11:00:00Z', idTag: 5 }, now),
    ).to.include({
      meter_wh: 12,
      timestamp: '2030-01-01T11:00:00Z',
      reason: 'Local',
    });
    // a register read with a fraction, or written as a string, is still the charger's reading
    const stopAt = (meterStop: unknown) => salvageStop16({ transactionId: 7, meterStop }, now)?.meter_wh;
    expect([7845.6, '7846', ' 7846.25 ', -3].map(stopAt)).to.deep.equal([7845.6, 7846, 7846.25, -3]);
    expect(['7,846', '1e4', '-5', '', 'Infinity', Number.NaN, 2 ** 60, '9'.repeat(20), true].map(stopAt)).to.deep.equal(
      Array.from({ length: 9 }, () => null),
    );
  });

  it('2.0.1: only Ended is an end; it needs a transactionId; the latest well-formed register reading counts', () => {
    expect(salvageEnded201({ eventType: 'Updated', transactionInfo: { transactionId: 't' } }, now)).to.equal(undefined);
    expect(salvageEnded201({ eventType: 'Ended', transactionInfo: { transactionId: 5 } }, now)).to.equal(null);
    const event = salvageEnded201(
      {
        eventType: 'Ended',
        seqNo: 'three',
        timestamp: '2030-01-01T11:30:00+01:00',
        transactionInfo: { transactionId: 'tx', stoppedReason: 'EVDisconnected' },
        meterValue: [
          { timestamp: '2030-01-01T10:29:00Z', sampledValue: [{ value: 2, unitOfMeasure: { unit: 'kWh' } }] },
          { timestamp: '2030-01-01T10:30:00Z', sampledValue: [{ value: 'broken' }] },
          { timestamp: 'later', sampledValue: [{ value: 9000 }] },
        ],
      },
      now,
    );
    expect(event).to.deep.equal({
      type: 'transaction-ended',
      transaction_id: 'tx',
      meter_wh: 2000,
      meter_at: '2030-01-01T10:29:00Z',
      timestamp: '2030-01-01T11:30:00+01:00',
      reason: 'EVDisconnected',
      seq_no: null,
      id_tag: null,
      salvaged: true,
    });
  });
});
