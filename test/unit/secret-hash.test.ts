import { expect } from 'chai';
import { hashSecret } from '../../src/secret-hash.js';

/**
 * Stored OCPI token hashes and charger key hashes are compared with this function's output:
 * a changed encoding would lock every partner and charger out (issue 8: one function for all).
 */
describe('secret hashing', () => {
  it('is SHA-256 of the UTF-8 bytes, in lowercase hex', () => {
    expect(hashSecret('abc')).to.equal('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashSecret('\u00e9')).to.equal('4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c');
  });
});
