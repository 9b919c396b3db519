import { expect } from 'chai';
import {
  COMMAND_EXPIRY_MS,
  CONNECTION_CLOSED_DETAIL,
  NOT_SENT_DETAIL,
  recordAsSeen,
} from '../../actors/charge-point/protocol.js';

/**
 * What an operator reads of a charger's commands (docs/CSMS.md "Operations"): the actor settles a
 * queued or sent call of an offline charger only when it connects again, and a queued call of a
 * connected one only when the queue moves, so a read says what will be recorded then.
 */
describe('a command record as a read shows it', () => {
  const queuedAt = Date.parse('2026-12-02T06:00:00Z');
  const record = (status: string) => ({
    command_id: 'c1',
    kind: 'reset',
    status,
    detail: null,
    updated_at: new Date(queuedAt).toISOString(),
  });

  it('a call sent before the connection closed has failed', () => {
    expect(recordAsSeen(record('sent'), false, queuedAt + 1000)).to.include({
      status: 'failed',
      detail: CONNECTION_CLOSED_DETAIL,
    });
  });

  it('a call queued longer than the expiry has expired (was queued for as long as the charger stayed away)', () => {
    expect(recordAsSeen(record('queued'), false, queuedAt + COMMAND_EXPIRY_MS - 1000)).to.include({
      status: 'queued',
    });
    expect(recordAsSeen(record('queued'), false, queuedAt + COMMAND_EXPIRY_MS + 1000)).to.include({
      status: 'expired',
      detail: NOT_SENT_DETAIL,
      updated_at: new Date(queuedAt + COMMAND_EXPIRY_MS).toISOString(),
    });
  });

  it('while the charger is online a sent or answered call is as the actor keeps it', () => {
    for (const status of ['sent', 'Accepted'])
      expect(recordAsSeen(record(status), true, queuedAt + 10 * COMMAND_EXPIRY_MS)).to.include({ status });
  });

  it('a call queued past the expiry behind calls of a connected charger has expired: it will not be sent', () => {
    expect(recordAsSeen(record('queued'), true, queuedAt + COMMAND_EXPIRY_MS - 1000)).to.include({ status: 'queued' });
    // was queued until the queue moved (the call ahead answered or timed out, up to 30 s later)
    expect(recordAsSeen(record('queued'), true, queuedAt + COMMAND_EXPIRY_MS + 1000)).to.include({
      status: 'expired',
      detail: NOT_SENT_DETAIL,
    });
  });
});
