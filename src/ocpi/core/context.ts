import type { Context } from 'koa';
import { publicOrigin } from '../../gateway/public-origin.js';
import type { PlatformServices } from '../../platform/services.js';
import type { PricingHandle } from '../../tariffs/module.js';
import { PartnerClient, partnerHttpOptions } from '../client/partner-client.js';
import type { StoredLocation } from '../locations/schemas-2.2.1.js';
import { CdrCheckStore } from '../cdrs/check-store.js';
import { creditsNaming } from '../cdrs/check.js';
import { CdrChecker } from '../cdrs/checker.js';
import { TariffVersions } from '../tariffs/versions.js';
import type { ChargerCommandPort } from '../commands/charger-port.js';
import type { SentCommand } from '../commands/schemas.js';
import type { StoredCdr, StoredSession } from '../sessions/stored.js';
import { ObjectStore, type ObjectSql } from '../store/object-store.js';
import type { Tariff } from '../tariffs/schemas-2.2.1.js';
import type { Token } from '../tokens/schemas-2.2.1.js';
import { TokenDirectory, type PartyIdentity } from './auth.js';
import { CacheInvalidation } from './invalidation.js';
import { PartnerDirectory } from './partners.js';

/** Our own party (config OCPI_COUNTRY_CODE, OCPI_PARTY_ID, OCPI_BUSINESS_NAME). */
export interface OwnParty extends PartyIdentity {
  business_name: string;
}

/** The stores of the OCPI objects, one per module (docs/OCPI.md "Storage"). */
export interface OcpiStores {
  locations: ObjectStore<StoredLocation>;
  sessions: ObjectStore<StoredSession>;
  tariffs: ObjectStore<Tariff>;
  tokens: ObjectStore<Token>;
  cdrs: ObjectStore<StoredCdr>;
  /** the commands our eMSP sent to partner CPOs, under our own party (uid: a UUID) */
  commands: ObjectStore<SentCommand>;
}

/** What every OCPI mount shares: one per process, built by the module. */
export class OcpiContext {
  readonly tokens: TokenDirectory;
  readonly stores: OcpiStores;
  readonly own: OwnParty;
  readonly partners: PartnerDirectory;
  readonly client: PartnerClient;
  private readonly invalidation: CacheInvalidation;
  /** our chargers, for partners' commands (the roaming bridge; none without it) */
  chargers: ChargerCommandPort | undefined;
  /** wakes the senders of the outbox after a change queued rows (module.ts sets it) */
  outbox: { kick(): void } = { kick: () => undefined };
  /** our re-pricing of the CDRs partner CPOs post us (cdrs/checker.ts): the checks kept */
  readonly cdrCheckStore: CdrCheckStore;
  /** and what re-prices them, when the pricing threads are given (module.ts) */
  readonly cdrChecks: CdrChecker | undefined;
  /**
   * A CDR of `party` was left unpriced for want of a tariff it names: set by the module to pull
   * that CPO's tariffs (src/ocpi/management/tariff-fetch.ts), which lives beside the pulls
   */
  onMissingTariff: ((party: PartyIdentity) => void) | undefined;
  /** the versions of the tariffs partners pushed us, for the CDR checks */
  readonly tariffVersions: TariffVersions;

  constructor(
    readonly services: PlatformServices,
    pricing?: PricingHandle,
  ) {
    const { db, config } = services;
    this.invalidation = new CacheInvalidation(services.redis, services.redisKeys, services.log);
    this.tokens = new TokenDirectory({ db });
    // the drivers directly (src/db/sql.ts): prepared statements, values bound; writes through the
    // process's group commit, so partners' PUTs that arrive together share one COMMIT
    const sql: ObjectSql = {
      query: (text, params) => db.sql.query(text, params),
      run: (text, params) => db.group.run((tx) => tx.run(text, params)),
    };
    const onWrite = (module: string, party: PartyIdentity) => this.invalidation.objectsWritten(module, party);
    this.stores = {
      locations: new ObjectStore(sql, 'locations', { onWrite }),
      sessions: new ObjectStore(sql, 'sessions', { onWrite }),
      tariffs: new ObjectStore(sql, 'tariffs', { onWrite }),
      tokens: new ObjectStore(sql, 'tokens', { onWrite }),
      cdrs: new ObjectStore(sql, 'cdrs', { onWrite }),
      commands: new ObjectStore(sql, 'commands', { onWrite }),
    };
    this.own = {
      country_code: config.OCPI_COUNTRY_CODE,
      party_id: config.OCPI_PARTY_ID,
      business_name: config.OCPI_BUSINESS_NAME,
    };
    this.client = new PartnerClient(partnerHttpOptions(config));
    this.partners = new PartnerDirectory(services, this.tokens, (hashes) => this.invalidation.tokensRevoked(hashes));
    this.cdrCheckStore = new CdrCheckStore(db);
    const { tariffs, locations, cdrs } = this.stores;
    const log = services.log.child({ module: 'cdr-checks' });
    this.tariffVersions = new TariffVersions(sql);
    const versions = this.tariffVersions;
    const missingTariff = (party: PartyIdentity): void => this.onMissingTariff?.(party);
    this.cdrChecks =
      pricing &&
      new CdrChecker(
        { tariffs, versions, locations, cdrs, creditsOf: creditsNaming(db.sql), pricing },
        this.cdrCheckStore,
        cdrs,
        log,
        missingTariff,
      );
  }

  /** Cluster mode: listen for other processes' revocations and writes (module `attach`). */
  async startInvalidation(): Promise<void> {
    await this.invalidation.start({
      tokens: (hashes) => this.tokens.forget(hashes),
      objects: (module, party) => {
        for (const store of Object.values(this.stores)) if (store.module === module) store.clearPages(party);
      },
    });
  }

  async stopInvalidation(): Promise<void> {
    await this.invalidation.stop();
  }

  /** The origin partners reach us at (gateway/public-origin.ts). */
  baseUrl(ctx?: Context): string {
    return publicOrigin(this.services.config, ctx);
  }

  /** Our own party as a party of objects (a store key): without the business name. */
  ownParty(): PartyIdentity {
    return { country_code: this.own.country_code, party_id: this.own.party_id };
  }

  isOwn(party: PartyIdentity): boolean {
    return party.country_code === this.own.country_code && party.party_id === this.own.party_id;
  }
}
