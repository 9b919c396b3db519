import type { Static } from '#typebox';
import type { BootHardware } from './domain.js';

/** `{hardware}` with the fields the charger gave, none when it gave none (a BootNotification). */
export function hardwareOf(fields: Partial<Record<keyof Static<typeof BootHardware>, string | undefined>>): {
  hardware?: Static<typeof BootHardware>;
} {
  const given = Object.entries(fields).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '');
  return given.length === 0 ? {} : { hardware: Object.fromEntries(given) };
}
