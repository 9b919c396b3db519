import { expect } from 'chai';
import { selectFleet, type FleetEntry } from '../../src/csms/fleet.js';

/** A fleet entry: `status` of its one connector (none: nothing reported), online or not. */
function entry(id: string, rank: number, o: Partial<FleetEntry> & { status?: string; error?: string }): FleetEntry {
  const { status, error, ...rest } = o;
  return {
    id,
    rank,
    protocol: 'ocpp1.6',
    online: true,
    last_seen: 1,
    vendor: null,
    model: null,
    connectors:
      status === undefined ? [] : [{ evse_id: 1, connector_id: 1, status, error_code: error ?? null, updated_at: '' }],
    open_transactions: 0,
    ...rest,
  };
}

/**
 * `sort=status` of the chargers list, "needs attention first" in the console (docs/CSMS.md, the
 * /v1 API): a charger that dropped off is above the healthy ones, and one that dropped off in the
 * middle of a charge or with a fault above the other offline ones. Offline chargers came last.
 */
describe('the chargers list sorted by status', () => {
  it('puts faulted, then offline ones (those cut off in a charge or a fault first), above the healthy; never connected last', () => {
    const fleet = [
      entry('AVAILABLE', 0, { status: 'Available' }),
      entry('NEVER', 1, { online: false, last_seen: 0 }),
      entry('OFFLINE', 2, { online: false, status: 'Available' }),
      entry('CHARGING', 3, { status: 'Charging', open_transactions: 1 }),
      entry('OFFLINE-IN-CHARGE', 4, { online: false, status: 'Charging', open_transactions: 1 }),
      entry('FAULTED', 5, { status: 'Faulted', error: 'GroundFailure' }),
      entry('OFFLINE-FAULTED', 6, { online: false, status: 'Faulted' }),
      entry('RESERVED', 7, { status: 'Reserved' }),
    ];
    const order = selectFleet(fleet, { sort: 'status', order: 'asc' }).map((e) => e.id);
    expect(order).to.deep.equal([
      'FAULTED',
      'OFFLINE-IN-CHARGE',
      'OFFLINE-FAULTED',
      'OFFLINE',
      'CHARGING',
      'RESERVED',
      'AVAILABLE',
      'NEVER',
    ]);
  });
});
