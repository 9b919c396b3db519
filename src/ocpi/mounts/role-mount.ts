import type { TSchema } from '#typebox';
import type { MountSpec } from '../../gateway/route-table.js';
import type { OcpiCaller, PartnerRole } from '../core/auth.js';
import type { OcpiContext } from '../core/context.js';
import { ourRoleToward } from '../credentials/handshake.js';
import { ocpiMount, type OcpiMountOptions, type OcpiRoute } from '../core/mount-kit.js';
import { versionDetailsRoute } from '../versions/routes.js';

export interface RoleMountOptions extends OcpiMountOptions {
  role: PartnerRole;
  /** GET `/`, the version details of the mount: its summary and the version's VersionDetail schema */
  details: { summary: string; schema: TSchema };
}

/**
 * A mount of one role and version (`/ocpi/{role}/{version}`): the module routes it is given,
 * after GET `/`, its version details, which list those routes by module (docs/OCPI.md "Mounts").
 */
export function roleMount(ctx: OcpiContext, o: RoleMountOptions): MountSpec<OcpiCaller> {
  const routes: OcpiRoute[] = [...o.routes];
  routes.unshift(
    versionDetailsRoute(ctx, {
      routes,
      version: o.version,
      role: o.role,
      prefix: o.prefix,
      summary: o.details.summary,
      detail: o.details.schema,
    }),
  );
  return ocpiMount(ctx, {
    name: o.name,
    prefix: o.prefix,
    version: o.version,
    accept: o.accept,
    description: o.description,
    routes,
    // our CPO mount is for eMSP partners, our eMSP mount for CPO partners
    serves: ourRoleToward(o.role),
  });
}
