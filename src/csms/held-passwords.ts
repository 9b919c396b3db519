import { hashIdentityKey } from './identity-key.js';

/**
 * New charger passwords waiting to be sent, in the memory of the process that holds the
 * charger's socket (the charge-point actor's `passwords` port): the actor's state, a database
 * row, keeps only their hash. A password is forgotten once sent, or after `keepMs` (a queued
 * command expires after 120 s anyway); a process that stops loses the ones it held, and the
 * actor then settles their command as expired (docs/CSMS.md "Passwords").
 */
export class HeldPasswords {
  private readonly held = new Map<string, { password: string; at: number }>();

  constructor(
    private readonly keepMs = 10 * 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Keeps the password of command `commandId`; returns its hash. */
  hold(commandId: string, password: string): string {
    const now = this.now();
    for (const [id, entry] of this.held) if (now - entry.at > this.keepMs) this.held.delete(id);
    this.held.set(commandId, { password, at: now });
    return hashIdentityKey(password);
  }

  get(commandId: string): string | undefined {
    return this.held.get(commandId)?.password;
  }

  forget(commandId: string): void {
    this.held.delete(commandId);
  }
}
