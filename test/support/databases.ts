import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A fresh SQLite file in a temporary folder; `cleanup` removes the folder. */
export function tempSqlite(): { url: string; file: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'evp-test-'));
  const file = join(dir, 'test.sqlite');
  return { url: `sqlite:${file}`, file, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function uniqueName(prefix: string): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

/** A fresh PostgreSQL schema for one test; `drop` removes it and everything in it. */
export async function tempSchema(): Promise<{
  schema: string;
  drop(): Promise<void>;
  query(sql: string, params?: unknown[]): Promise<pg.QueryResult>;
}> {
  const schema = uniqueName('t');
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`CREATE SCHEMA "${schema}"`);
  await client.query(`SET search_path TO "${schema}"`);
  return {
    schema,
    query: (sql, params) => client.query(sql, params),
    drop: async () => {
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    },
  };
}
