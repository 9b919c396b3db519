import type { DiscoveryOutcome, PartnerDiscoveryPort } from '../../../actors/partner/ports.js';
import { PartnerCallError } from './partner-call-error.js';
import type { PartnerClient } from './partner-client.js';

/**
 * The partner actor's discovery port backed by the process's PartnerClient (docs/ARCHITECTURE.md; the actor
 * imports no OCPI internals). A PartnerCallError becomes data the actor can answer with; any
 * other failure is a bug and still throws, so the turn fails loudly.
 */
export function discoveryPort(client: PartnerClient): PartnerDiscoveryPort {
  return {
    async discover(versionsUrl, token, version): Promise<DiscoveryOutcome> {
      try {
        // the partner called our credentials endpoint of `version`: the link is of that version
        const found = await client.discover(versionsUrl, token, version, version);
        return { ok: true, version: found.version, endpoints: found.endpoints };
      } catch (err) {
        if (err instanceof PartnerCallError)
          return { ok: false, code: err.code, message: err.message, log: err.toLog() };
        throw err;
      }
    },
  };
}
