import { expect } from 'chai';
import type { Database } from '../../src/db/database.js';

/**
 * Migration m0006 on a database that holds tokens and tariffs in their 2.1.1 shape: they come
 * out in the 2.2.1 shape with the row's party; rows already in the 2.2.1 shape are unchanged.
 */
export async function checkOcpiShapesMigration(db: Database): Promise<void> {
  await db.migrate('m0005-fence-clock');
  const insert = inserter(db);
  const token211 = {
    uid: 'U1',
    type: 'RFID',
    auth_id: 'DE-ABC-C1',
    issuer: 'x',
    valid: true,
    whitelist: 'ALWAYS',
    last_updated: '2026-01-01T00:00:00Z',
  };
  const tariff211 = { id: 'T1', currency: 'EUR', elements: [], last_updated: '2026-01-01T00:00:00Z' };
  const token221 = {
    ...token211,
    uid: 'U2',
    auth_id: undefined,
    contract_id: 'C2',
    country_code: 'NL',
    party_id: 'EVP',
  };
  await insert('tokens', ['DE', 'ABC'], 'U1', token211);
  await insert('tariffs', ['NL', 'EVP'], 'T1', tariff211);
  await insert('tokens', ['NL', 'EVP'], 'U2', token221);
  expect(await db.migrate()).to.include('m0006-ocpi-221');
  const read = async (module: string, id: string) => {
    const rows = await db.sql.query('SELECT data FROM ocpi_object WHERE module = ? AND object_id = ?', [module, id]);
    return JSON.parse(String(rows[0]?.data)) as Record<string, unknown>;
  };
  const { auth_id: _gone, ...rest } = token211;
  expect(await read('tokens', 'U1')).to.deep.equal({
    ...rest,
    contract_id: 'DE-ABC-C1',
    country_code: 'DE',
    party_id: 'ABC',
  });
  expect(await read('tariffs', 'T1')).to.deep.equal({ ...tariff211, country_code: 'NL', party_id: 'EVP' });
  expect(await read('tokens', 'U2')).to.deep.equal(JSON.parse(JSON.stringify(token221)));
  // a 2.2.1 CDR id has 39 characters
  const longId = 'C'.repeat(39);
  await insert('cdrs', ['NL', 'EVP'], longId, { id: longId });
  expect((await read('cdrs', longId)).id).to.equal(longId);
}

/** An object row as the objects table held it before a migration (`published` 1). */
function inserter(db: Database) {
  return (module: string, party: [string, string], id: string, data: object) =>
    db.sql.run(
      'INSERT INTO ocpi_object (module, country_code, party_id, object_id, last_updated_ms, published, data, updated_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?)',
      [module, party[0], party[1], id, 0, JSON.stringify(data), 0],
    );
}

/**
 * Migration m0031 on a database that holds credit CDRs received before credits were stored with
 * `published` 2: they get 2 (the check of a second credit finds them), other CDRs keep 1.
 */
export async function checkReceivedCreditsMigration(db: Database): Promise<void> {
  await db.migrate('m0030-meter-signed');
  const insert = inserter(db);
  await insert('cdrs', ['NL', 'EVP'], 'CDR-1', { id: 'CDR-1', total_cost: { excl_vat: 5 } });
  await insert('cdrs', ['NL', 'EVP'], 'CDR-1-C', { id: 'CDR-1-C', credit: true, credit_reference_id: 'CDR-1' });
  await insert('cdrs', ['NL', 'EVP'], 'CDR-2', { id: 'CDR-2', credit: false });
  await insert('locations', ['NL', 'EVP'], 'LOC-1', { id: 'LOC-1', credit: true });
  expect(await db.migrate()).to.include('m0031-received-credits');
  const rows = await db.sql.query('SELECT module, object_id, published FROM ocpi_object ORDER BY object_id', []);
  expect(rows.map((r) => `${String(r.module)} ${String(r.object_id)} ${Number(r.published)}`)).to.deep.equal([
    'cdrs CDR-1 1',
    'cdrs CDR-1-C 2',
    'cdrs CDR-2 1',
    'locations LOC-1 1',
  ]);
}
