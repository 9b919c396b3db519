import type { SqlRunner } from '../../src/runtime/types.js';
import type { Static } from '#typebox';
import type { Endpoint, Version } from './protocol.js';

/**
 * What the partner actor is given by the module hosting it (src/ocpi/module.ts): the calls to
 * partners and the tables the rest of OCPI reads, as interfaces. The actor imports no OCPI
 * internals (the folder rule of scripts/check-import-cycles.mjs).
 */
export interface PartnerActorDeps {
  discovery: PartnerDiscoveryPort;
  projection: PartnerProjection;
}

/**
 * The port through which the partner actor reaches the partner. The module passes one in,
 * backed by the process's PartnerClient, so the process's limits and destination policy apply.
 * A failed call comes back as data: the OCPI status code and message for the caller, and what
 * happened for our log only.
 */
export interface PartnerDiscoveryPort {
  discover(versionsUrl: string, token: string, version: Static<typeof Version>): Promise<DiscoveryOutcome>;
}

export type DiscoveryOutcome =
  | { ok: true; version: Static<typeof Version>; endpoints: Array<Static<typeof Endpoint>> }
  | { ok: false; code: 3001 | 3002 | 3003; message: string; log: object };

/** What the projections keep of a partner's link (a part of the actor's state). */
export interface PartnerRecord {
  id: string;
  country_code: string;
  party_id: string;
  role: 'CPO' | 'EMSP';
  status: 'new' | 'unregistered' | 'registered';
  versions_url: string | null;
  version: Static<typeof Version> | null;
  /** hashes of the tokens we issued that are valid now, and which one each is */
  tokens: Array<{ hash: string; kind: 'initial' | 'retired' | 'current' | 'pending' }>;
  /** the other parties the link speaks for (a 2.2.1 platform or hub) */
  parties?: Array<{ country_code: string; party_id: string; role: 'CPO' | 'EMSP' }>;
  created_at: number;
  updated_at: number;
}

/**
 * The port through which the actor writes the projections of its state that other code reads:
 * the operator's lists and the per-request token lookup. Runs in the actor turn's fenced
 * transaction, so the projections change with the state or not at all.
 */
export interface PartnerProjection {
  write(tx: SqlRunner, partner: PartnerRecord): Promise<void>;
}
