import { randomBytes, timingSafeEqual } from 'node:crypto';
import { hashSecret } from '../../secret-hash.js';
import type { Context } from 'koa';
import type { Database } from '../../db/database.js';
import type { OcpiVersion } from './envelope.js';
import { unauthorized } from './errors.js';

/** What a partner is called in the OCPI sense, as bound to its token (docs/OCPI.md "Who sees what"). */
export interface PartyIdentity {
  country_code: string;
  party_id: string;
}

export type PartnerRole = 'CPO' | 'EMSP';

/** A party in one of its roles. */
export interface PartyRole extends PartyIdentity {
  role: PartnerRole;
}

/**
 * How a token stands in the handshake: `initial` is Token A (registration only), `current` the
 * token of a registered link, `pending` a token we handed out for a handshake we started and
 * that is not finished yet (the partner already calls our versions endpoint with it).
 */
export type TokenKind = 'initial' | 'retired' | 'current' | 'pending';

function tokenKindOf(kind: unknown): TokenKind {
  return kind === 'initial' || kind === 'retired' || kind === 'pending' ? kind : 'current';
}

/**
 * The authenticated caller of an OCPI endpoint. `country_code`, `party_id` and `role` are the
 * party it acts as in this request: the one it was onboarded as, or another of `parties` that
 * the mount's role or the `OCPI-from-*` headers chose (mount-kit.ts, docs/OCPI.md "Platforms and hubs").
 */
export interface OcpiCaller extends PartyIdentity {
  partnerId: string;
  role: PartnerRole;
  /** every party the token speaks for, the onboarded one first */
  parties: PartyRole[];
  /** the party was chosen by the request's `OCPI-from-*` headers (routing.ts) */
  routed?: boolean;
  tokenKind: TokenKind;
  tokenHash: string;
  /** the token as the caller means it (decoded when it came base64-encoded) */
  token: string;
}

/** The party the caller was onboarded as: the key of its partner actor and its link. */
export function onboardedParty(caller: OcpiCaller): PartyRole {
  return caller.parties[0] ?? caller;
}

/** A token as the tokens table stores it. */
export function hashToken(token: string): string {
  return hashSecret(token);
}

/** A fresh token: 32 random bytes, base64url (43 characters, within OCPI's 64). */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** How a token goes into our outbound `Authorization` header: base64 for 2.2.1, as it is for 2.1.1. */
export function authorizationHeader(token: string, version: OcpiVersion): string {
  return `Token ${version === '2.2.1' ? Buffer.from(token, 'utf8').toString('base64') : token}`;
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const PRINTABLE = /^[\x21-\x7e]+$/;

/**
 * The tokens an `Authorization: Token <x>` header may stand for. 2.2.1 sends base64 of the
 * token (OCPI 2.2.1 transport_and_format.asciidoc, "Authorization header"), older clients the
 * raw token, which 2.2.1 mounts accept too (docs/OCPI.md "Mounts"); 2.1.1 is raw only.
 */
export function presentedTokens(header: string | undefined, accept: 'raw' | 'base64-or-raw'): string[] {
  const m = header ? /^Token\s+(\S+)\s*$/i.exec(header) : null;
  const value = m?.[1];
  if (!value) return [];
  if (accept === 'raw') return [value];
  const candidates: string[] = [];
  if (value.length % 4 === 0 && BASE64.test(value)) {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    if (PRINTABLE.test(decoded) && decoded !== value) candidates.push(decoded);
  }
  candidates.push(value);
  return candidates;
}

interface CachedToken {
  caller: Omit<OcpiCaller, 'token'>;
  /** the caller with its token, as `authenticate` answers it: made once per entry, frozen */
  withToken?: Readonly<OcpiCaller>;
  expiresAt: number;
}

export interface TokenDirectoryOptions {
  db: Database;
  /** how long a positive lookup is trusted without the database (bound on a revoked token elsewhere) */
  cacheMs?: number;
  maxEntries?: number;
}

/**
 * Token -> partner lookups on every request. The table holds sha256 hashes; the lookup is by
 * primary key. A small positive cache spares the database: a rotation in this process evicts
 * the old hash at once (`forget`), other processes drop it within `cacheMs` (default 1 s,
 * docs/OCPI.md "Tokens"). Misses are not cached, so a token issued on another process works at once.
 */
export class TokenDirectory {
  private readonly cache = new Map<string, CachedToken>();
  /**
   * token -> its hash, so that a partner's token is hashed once per process, not on every
   * request. Only tokens that named a partner when they were looked up go in (a flood of made-up
   * tokens does not fill it), bounded like `cache`; a hash never goes stale (it is a function of
   * the token), so revocation works on `cache` alone.
   */
  private readonly hashes = new Map<string, string>();
  private readonly cacheMs: number;
  private readonly maxEntries: number;

  constructor(private readonly opts: TokenDirectoryOptions) {
    this.cacheMs = opts.cacheMs ?? 1000;
    this.maxEntries = opts.maxEntries ?? 10_000;
  }

  /** The caller behind the header, or a 401 with the version's status code. */
  async authenticate(ctx: Context, version: OcpiVersion, accept: 'raw' | 'base64-or-raw'): Promise<OcpiCaller> {
    const tokens = presentedTokens(ctx.get('Authorization') || undefined, accept);
    for (const token of tokens) {
      const known = this.known(token);
      if (known) return known;
      const caller = await this.lookup(token);
      if (caller) return { ...caller, token };
      // a token that named a partner once and no longer does (rotated, unregistered) is not
      // vouched for again: its next failures wait out their address's back-off unchecked
      this.hashes.delete(token);
    }
    throw unauthorized(version);
  }

  /**
   * The request carries a token that named a partner when this process last looked it up: it is
   * checked even while its address is refused for others' failures (auth-failures.ts), and a
   * made-up one is not. A look in a map, no hash and no query.
   */
  vouched(ctx: Context, accept: 'raw' | 'base64-or-raw'): boolean {
    return presentedTokens(ctx.get('Authorization') || undefined, accept).some((t) => this.hashes.has(t));
  }

  /**
   * A token looked up within `cacheMs`, answered without hashing, awaiting or copying: every
   * request of a partner gets the same frozen caller (every use of it copies rather than changes).
   */
  private known(token: string): OcpiCaller | undefined {
    const hash = this.hashes.get(token);
    const cached = hash === undefined ? undefined : this.cache.get(hash);
    if (!cached || cached.expiresAt <= Date.now()) return undefined;
    cached.withToken ??= Object.freeze({ ...cached.caller, token });
    return cached.withToken;
  }

  async lookup(token: string): Promise<Omit<OcpiCaller, 'token'> | undefined> {
    const hash = this.hashes.get(token) ?? hashToken(token);
    const now = Date.now();
    const cached = this.cache.get(hash);
    if (cached && cached.expiresAt > now) return cached.caller;
    if (cached) this.cache.delete(hash);
    // a platform's other parties come along (a left join: most partners have none)
    const rows = await this.opts.db.execute(
      `SELECT t.token_hash, t.partner_id, t.country_code, t.party_id, t.role, t.kind,
         p.country_code AS p_country_code, p.party_id AS p_party_id, p.role AS p_role
       FROM ocpi_partner_token t LEFT JOIN ocpi_partner_party p ON p.partner_id = t.partner_id
       WHERE t.token_hash = ?`,
      [hash],
    );
    const row = rows[0];
    if (!row) return undefined;
    // the index found the row by hash; compare the secret-derived value in constant time anyway
    const stored = Buffer.from(String(row.token_hash), 'hex');
    const given = Buffer.from(hash, 'hex');
    if (stored.length !== given.length || !timingSafeEqual(stored, given)) return undefined;
    const own: PartyRole = {
      country_code: String(row.country_code),
      party_id: String(row.party_id),
      role: row.role === 'CPO' ? 'CPO' : 'EMSP',
    };
    const parties = [own];
    for (const r of rows) {
      if (r.p_country_code === null || r.p_country_code === undefined) continue;
      parties.push({
        country_code: String(r.p_country_code),
        party_id: String(r.p_party_id),
        role: r.p_role === 'CPO' ? 'CPO' : 'EMSP',
      });
    }
    const caller: Omit<OcpiCaller, 'token'> = {
      partnerId: String(row.partner_id),
      ...own,
      parties,
      tokenKind: tokenKindOf(row.kind),
      tokenHash: hash,
    };
    if (this.cache.size >= this.maxEntries) this.cache.clear();
    this.cache.set(hash, { caller, expiresAt: now + this.cacheMs });
    if (this.hashes.size >= this.maxEntries) this.hashes.clear();
    this.hashes.set(token, hash);
    return caller;
  }

  /** Drops revoked or changed hashes from this process's cache. */
  forget(hashes: readonly string[]): void {
    for (const h of hashes) this.cache.delete(h);
  }
}
