import { chromium, type Browser, type Page } from 'playwright-core';
import { hashIdentityKey } from '../../src/csms/identity-key.js';
import type { CsmsUnderTest } from '../ocpp/support/csms.js';

/** Debian's chromium (apt-get install chromium); the tests never download a browser. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/**
 * Registers `count` chargers `${prefix}-1` ... straight into the registry table, one transaction,
 * all with the same password (hashed once): what 10,000 POST /v1/charge-points would leave, in a
 * fraction of the time (each POST hashes and writes on its own).
 */
export async function registerFleet(
  csms: CsmsUnderTest,
  opts: { prefix: string; count: number; password: string },
): Promise<void> {
  const hash = hashIdentityKey(opts.password);
  const now = Date.now();
  await csms.started.platform.services.db.sql.transaction(async (tx) => {
    for (let i = 1; i <= opts.count; i += 1)
      await tx.run(
        'INSERT INTO csms_charge_point (id, protocol, key_hash, created_at, boot_policy) VALUES (?, ?, ?, ?, NULL)',
        [`${opts.prefix}-${i}`, i % 5 === 0 ? 'ocpp2.0.1' : 'ocpp1.6', hash, now],
      );
  });
}

/** Signs in on the console's first screen with the operator key. */
export async function signIn(page: Page, url: string, key: string, hash = ''): Promise<void> {
  await page.goto(`${url}/dashboard${hash}`);
  await page.getByLabel('operator API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('live').filter({ hasText: 'live' }).waitFor();
}
