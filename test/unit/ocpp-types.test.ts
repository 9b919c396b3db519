import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect } from 'chai';
import { generateOcppTypes, ocppTypesTargets } from '../../scripts/generate-ocpp-types.js';

describe('generated OCPP payload types', () => {
  // the committed files are what the adapters compile against; a schema package upgrade (or a
  // hand edit) that leaves them behind the official schemas fails here, not in production
  for (const target of ocppTypesTargets) {
    it(`${target.file} matches the OCPP ${target.version} schemas (regenerate: node dist/scripts/generate-ocpp-types.js)`, () => {
      const committed = readFileSync(resolve(import.meta.dirname, '../../..', target.file), 'utf8');
      expect(generateOcppTypes(target) === committed, `${target.file} is stale`).to.equal(true);
    });
  }
});
