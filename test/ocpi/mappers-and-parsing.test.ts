import { expect } from 'chai';
import { presentedTokens } from '../../src/ocpi/core/auth.js';
import { coordinate211 } from '../../src/ocpi/core/schemas.js';
import {
  connectorFrom211,
  connectorTo211,
  locationFrom211,
  locationTo211,
  mergeLocation,
} from '../../src/ocpi/locations/mappers.js';
import { listWindow, MAX_LIMIT } from '../../src/ocpi/core/pagination.js';
import { nextLink } from '../../src/gateway/paging.js';
import type * as V211 from '../../src/ocpi/locations/schemas-2.1.1.js';
import type * as V221 from '../../src/ocpi/locations/schemas-2.2.1.js';
import { aConnector, aConnector211, aLocation, aLocation211, anEvse } from '../support/ocpi-builders.js';

/** Pure logic of the OCPI module: version mappers, header parsing, list windows. */
describe('OCPI mappers and parsing', () => {
  it('maps a connector between 2.1.1 and 2.2.1 and back without loss', () => {
    const c211 = aConnector211({ id: 'C1' }) as unknown as V211.Connector;
    const c221 = connectorFrom211(c211);
    expect(c221).to.include({ max_voltage: 500, max_amperage: 125 });
    expect(c221.tariff_ids).to.deep.equal(['T-1']);
    expect(connectorTo211(c221)).to.deep.equal(c211);
    const noTariff = connectorTo211({ ...(aConnector() as unknown as V221.Connector), tariff_ids: undefined });
    expect(noTariff).not.to.have.property('tariff_id');
  });

  it('serves a stored location in the 2.1.1 shape, and stores a pulled 2.1.1 location under its party', () => {
    const stored = aLocation({ id: 'L1', parking_type: 'ALONG_MOTORWAY' }) as unknown as V221.StoredLocation;
    const out = locationTo211(stored);
    expect(out).to.include({ id: 'L1', type: 'OTHER' });
    expect(out).not.to.have.any.keys('country_code', 'party_id', 'publish', 'parking_type');
    expect(locationTo211({ ...stored, parking_type: undefined }).type).to.equal('UNKNOWN');

    const pulled = locationFrom211(aLocation211({ id: 'P1', time_zone: undefined }) as unknown as V211.Location, {
      country_code: 'DE',
      party_id: 'ABC',
    });
    expect(pulled).to.include({
      id: 'P1',
      country_code: 'DE',
      party_id: 'ABC',
      publish: true,
      parking_type: 'ON_STREET',
      time_zone: 'Etc/UTC',
    });
    expect(pulled.evses?.[0]?.connectors[0]).to.have.property('max_voltage');
  });

  it('merges a location patch: fields replace, EVSEs merge by uid, connectors by id, new ones append', () => {
    const location = aLocation({
      id: 'L1',
      name: 'Old',
      evses: [anEvse({ uid: 'E1', connectors: [aConnector({ id: 'C1' }), aConnector({ id: 'C2' })] })],
    }) as unknown as V221.StoredLocation;
    const merged = mergeLocation(location, {
      name: 'New',
      evses: [
        { uid: 'E1', status: 'CHARGING', connectors: [{ id: 'C2', max_amperage: 63 }] },
        anEvse({ uid: 'E2' }) as unknown as V221.Evse,
      ],
    });
    expect(merged).to.include({ id: 'L1', name: 'New', city: 'Utrecht' });
    expect(merged.evses?.map((e) => e.uid)).to.deep.equal(['E1', 'E2']);
    expect(merged.evses?.[0]).to.include({ status: 'CHARGING' });
    expect(merged.evses?.[0]?.connectors.map((c) => [c.id, c.max_amperage])).to.deep.equal([
      ['C1', 32],
      ['C2', 63],
    ]);
  });

  it('writes a 2.2.1 coordinate with the 6 decimals of 2.1.1, rounding half away from zero', () => {
    const cases: Array<[string, string]> = [
      ['52.09001', '52.090010'],
      ['52.090001', '52.090001'],
      ['52.0900049', '52.090005'],
      ['52.0900044', '52.090004'],
      ['-5.1210005', '-5.121001'],
      ['89.9999996', '90.000000'],
      ['-179.9999995', '-180.000000'],
      ['-0.0000004', '0.000000'],
      ['0.00000', '0.000000'],
    ];
    for (const [given, expected] of cases) expect(coordinate211(given), given).to.equal(expected);
  });

  it('reads the tokens an Authorization header may stand for', () => {
    const token = 'abc-123_XYZ';
    const b64 = Buffer.from(token).toString('base64');
    expect(presentedTokens(`Token ${token}`, 'raw')).to.deep.equal([token]);
    expect(presentedTokens(`Token ${b64}`, 'raw')).to.deep.equal([b64]);
    expect(presentedTokens(`Token ${b64}`, 'base64-or-raw')).to.deep.equal([token, b64]);
    expect(presentedTokens(`token   ${token}`, 'base64-or-raw')).to.deep.equal([token]);
    for (const bad of [undefined, '', 'Bearer x', 'Token', 'Token a b'])
      expect(presentedTokens(bad, 'base64-or-raw'), String(bad)).to.deep.equal([]);
  });

  it('finds rel="next" in a Link header and turns list queries into windows', () => {
    expect(nextLink('<http://a/x?offset=2>; rel="next"')).to.equal('http://a/x?offset=2');
    expect(nextLink('<http://a/p>; rel="prev", <http://a/n>; rel=next')).to.equal('http://a/n');
    expect(nextLink(null)).to.equal(undefined);
    expect(listWindow({})).to.deep.equal({ offset: 0, limit: 100 });
    expect(listWindow({ limit: 5000, offset: 3 })).to.deep.equal({ offset: 3, limit: MAX_LIMIT });
    expect(listWindow({ date_from: '2026-01-01T00:00:00Z', date_to: '2026-01-02T00:00:00Z' })).to.include({
      from: Date.UTC(2026, 0, 1),
      to: Date.UTC(2026, 0, 2),
    });
  });
});
