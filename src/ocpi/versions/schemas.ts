import Type from '#typebox';
import { oneOf } from '../core/schemas.js';
import { titled } from '../../gateway/openapi.js';

/**
 * The versions module (OCPI 2.2.1 version_information_endpoint.asciidoc, OCPI 2.1.1
 * version_information_endpoint.md): the version list, and the version details of each version,
 * whose endpoints carry an interface role from 2.2.1 on.
 */

export const VersionList = Type.Array(Type.Object({ version: Type.String(), url: Type.String() }));

export const Endpoint211 = Type.Object({ identifier: Type.String(), url: Type.String() });
export const VersionDetail211 = Type.Object({ version: Type.String(), endpoints: Type.Array(Endpoint211) });

export const Endpoint221 = titled(
  'Endpoint221',
  Type.Object({
    identifier: Type.String(),
    role: oneOf(['SENDER', 'RECEIVER']),
    url: Type.String(),
  }),
);
export const VersionDetail221 = Type.Object({ version: Type.String(), endpoints: Type.Array(Endpoint221) });
