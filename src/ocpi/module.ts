import type { ActorHost, PlatformModule, PlatformServices } from '../platform/services.js';
import type { PricingHandle } from '../tariffs/module.js';
import type { RegisteredActor } from '../runtime/types.js';
import { ocpiCommandActor } from '../../actors/ocpi-command/actor.js';
import { partnerOutboxActor } from '../../actors/partner-outbox/actor.js';
import { partnerActor } from '../../actors/partner/actor.js';
import { discoveryPort } from './client/discovery-port.js';
import { PartnerClient, partnerHttpOptions } from './client/partner-client.js';
import { OcpiContext } from './core/context.js';
import { cpo211Mount } from './mounts/cpo-2.1.1.js';
import { cpo221Mount } from './mounts/cpo-2.2.1.js';
import { emsp211Mount } from './mounts/emsp-2.1.1.js';
import { emsp221Mount } from './mounts/emsp-2.2.1.js';
import { MissingTariffFetcher } from './management/tariff-fetch.js';
import { ocpiManagementMount } from './mounts/management.js';
import { ocpiNamespaceMount } from './mounts/namespace.js';
import { overviewMount } from './mounts/overview.js';
import { roleVersionsMount } from './mounts/role-versions.js';
import { partnerProjection } from './core/partner-projection.js';
import { outboxPorts, type CdrSource } from './outbox/courier.js';
import type { ChargerCommandPort } from './commands/charger-port.js';
import { enqueue, OutboxStore } from './outbox/outbox-store.js';
import { outboxRoutes } from './outbox/routes.js';
import { OutboxSweeper } from './outbox/sweeper.js';

/**
 * What other modules use of the outbox (docs/ROAMING.md "The outbox"): after a change of theirs
 * queued rows (`outbox-store.ts` enqueue, in their own transaction), `kick` has them sent now
 * rather than at the next sweep. Does nothing in a process without the HTTP server.
 */
export interface OutboxHandle {
  kick(): void;
}

export type OcpiModule = PlatformModule & { outbox: OutboxHandle };

export interface OcpiModuleOptions {
  /** our chargers, for partners' commands (the roaming bridge); without it every command is REJECTED */
  chargers?: (services: PlatformServices) => ChargerCommandPort;
  /**
   * the pricing threads (src/tariffs): with them, the CDRs partner CPOs post us are re-priced
   * (docs/TARIFFS.md "Re-pricing received CDRs"); without them they are only stored
   */
  pricing?: PricingHandle;
  /** our CDRs, built when a CDR's send finds it not built yet (src/roaming/cdrs.ts) */
  cdrs?: (host: ActorHost) => CdrSource;
}

/** The partner, partner-outbox and command actors. */
function ocpiActors(host: ActorHost, opts: OcpiModuleOptions, outbox: OutboxHandle): RegisteredActor[] {
  return [
    partnerActor({
      discovery: discoveryPort(new PartnerClient(partnerHttpOptions(host.config))),
      projection: partnerProjection({
        country_code: host.config.OCPI_COUNTRY_CODE,
        party_id: host.config.OCPI_PARTY_ID,
      }),
    }),
    partnerOutboxActor(outboxPorts(host.config, host.db, opts.cdrs?.(host))),
    ocpiCommandActor({
      queueResult: (partnerKey, result) => async (tx) => {
        await enqueue(tx, { partner_key: partnerKey }, { kind: 'command-result', ...result });
      },
      queued: () => outbox.kick(),
    }),
  ];
}

/** The outbox gauges read the outbox table (in every role: a worker is scraped too). */
function observeOutbox(services: PlatformServices): void {
  const rows = new OutboxStore(services.db);
  services.metrics.sources.outbox = () => rows.depths();
}

/**
 * OCPI 2.1.1 and 2.2.1 for the CPO and eMSP roles, the overview mount, and the operator's
 * partner routes under /v1 (docs/OCPI.md), and the outbox that sends what we push to partners
 * (docs/ROAMING.md "The outbox").
 */
export function ocpiModule(opts: OcpiModuleOptions = {}): OcpiModule {
  let context: OcpiContext | undefined;
  let sweeper: OutboxSweeper | undefined;
  const outbox: OutboxHandle = { kick: () => sweeper?.kick() };
  return {
    name: 'ocpi',
    outbox,
    actors: (host) => ocpiActors(host, opts, outbox),
    observe: observeOutbox,
    mounts(services) {
      const ctx = new OcpiContext(services, opts.pricing);
      context = ctx;
      sweeper = new OutboxSweeper(
        new OutboxStore(services.db),
        services.actors,
        services.log.child({ module: 'outbox' }),
        services.config.OUTBOX_SWEEP_MS,
      );
      ctx.outbox = sweeper;
      ctx.chargers = opts.chargers?.(services);
      // a CDR naming a tariff the CPO never pushed: its tariffs Sender is pulled (docs/TARIFFS.md)
      const tariffs = new MissingTariffFetcher(ctx, services.log.child({ module: 'cdr-checks' }));
      ctx.onMissingTariff = (party) => tariffs.missing(party);
      const cpo211 = cpo211Mount(ctx);
      const emsp211 = emsp211Mount(ctx);
      return [
        roleVersionsMount(ctx, 'cpo'),
        roleVersionsMount(ctx, 'emsp'),
        cpo211,
        cpo221Mount(ctx),
        emsp211,
        emsp221Mount(ctx),
        overviewMount(ctx, {
          roleMounts211: [
            { role: 'CPO', prefix: cpo211.prefix, routes: cpo211.routes },
            { role: 'EMSP', prefix: emsp211.prefix, routes: emsp211.routes },
          ],
        }),
        ocpiManagementMount(ctx, outboxRoutes(ctx, sweeper)),
        ocpiNamespaceMount(),
      ];
    },
    async attach() {
      await context?.startInvalidation();
      sweeper?.start();
    },
    async stop() {
      sweeper?.stop();
      // the re-pricings under way end before the pricing module (after this one) stops its threads
      await Promise.all([context?.cdrChecks?.stop(), context?.stopInvalidation()]);
    },
  };
}
