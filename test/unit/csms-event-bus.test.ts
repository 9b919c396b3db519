import { expect } from 'chai';
import { pino } from 'pino';
import { CsmsEventBus } from '../../src/csms/events.js';

/**
 * Whether an event could reach anyone decides whether a charge point's turn builds one at all
 * (every meter value asks): embedded, only while a live view listens in this process.
 */
describe('CSMS event bus without Redis: who listens', () => {
  const bus = (): CsmsEventBus =>
    new CsmsEventBus(pino({ level: 'silent' }), undefined, { events: 'e', listeners: 'l' });

  it('is listened to exactly while a subscriber is, and hands it every event published meanwhile', () => {
    const b = bus();
    expect(b.listened()).to.equal(false);
    const got: unknown[] = [];
    const stopA = b.subscribe((e) => got.push(e));
    const stopB = b.subscribe(() => undefined);
    expect(b.listened()).to.equal(true);
    b.publish({ type: 'charge-point', charge_point_id: 'CP-1' });
    stopA();
    expect(b.listened(), 'one subscriber left').to.equal(true);
    stopB();
    expect(b.listened()).to.equal(false);
    b.publish({ type: 'charge-point', charge_point_id: 'CP-2' });
    expect(got).to.deep.equal([{ type: 'charge-point', charge_point_id: 'CP-1' }]);
  });
});
