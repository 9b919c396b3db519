import type { Context } from 'koa';
import type { Config } from '../../config/index.js';

/** A host name or address with an optional port: nothing that could end a URL or a Link header early. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/**
 * The origin links in our answers start with (OCPI versions and endpoint URLs, `ocpp_url`,
 * `Link: rel="next"`): PUBLIC_URL when set; otherwise the scheme and Host the caller used, so
 * links work on any port. X-Forwarded-Proto/-Host count only with TRUST_PROXY (Koa's `proxy`,
 * set in gateway.ts); a Host that is not a host name falls back to the configured origin
 * (docs/SECURITY.md; before, forwarded headers from anyone made these links point anywhere).
 */
export function publicOrigin(config: Pick<Config, 'PUBLIC_URL' | 'publicUrl'>, ctx?: Context): string {
  if (config.PUBLIC_URL || !ctx) return config.publicUrl;
  const host = ctx.host;
  return HOST.test(host) ? `${ctx.protocol}://${host}` : config.publicUrl;
}
