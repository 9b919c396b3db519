import type { ProtocolName } from './domain.js';

/**
 * The HTTP Basic password of security profiles 1 and 2 (docs/CSMS.md "Passwords"), as each
 * version sets it on a charger:
 * - 2.0.1 A00.FR.205: a passwordString of 16 to 40 characters (the maxLimit of
 *   SecurityCtrlr.BasicAuthPassword), passwordString being a-z A-Z 0-9 and `*-_=:+|@.`
 *   (part 2, primitive datatypes); set with SetVariables as it is;
 * - 1.6 security whitepaper: the AuthorizationKey configuration key carries the password's
 *   octets hexadecimal, at least 16 and at most 20 of them (40 hex digits). The compliance tool
 *   checks exactly that, and reads a configured value of 16-20 characters as the password itself.
 * Here a password is always a passwordString, which for 1.6 is also at most 20 characters (its
 * octets are its ASCII characters), so one password reads the same in both versions.
 */

const PASSWORD_STRING = /^[A-Za-z0-9*\-_=:+|@.]*$/;
export const PASSWORD_MIN_LENGTH = 16;
export const PASSWORD_MAX_LENGTH: Readonly<Record<ProtocolName, number>> = { 'ocpp1.6': 20, 'ocpp2.0.1': 40 };

/** Why `password` cannot be a charger's password in `version`, or undefined when it can. */
export function passwordRuleBreach(password: string, version: ProtocolName): string | undefined {
  const max = PASSWORD_MAX_LENGTH[version];
  if (!PASSWORD_STRING.test(password))
    return 'a charger password may hold only a-z, A-Z, 0-9 and * - _ = : + | @ . (OCPP passwordString)';
  if (password.length < PASSWORD_MIN_LENGTH || password.length > max)
    return version === 'ocpp1.6'
      ? `an OCPP 1.6 charger's password is 16 to 20 characters (the security whitepaper's AuthorizationKey carries 16 to 20 octets); this one has ${password.length}`
      : `an OCPP 2.0.1 charger's password is 16 to 40 characters (BasicAuthPassword); this one has ${password.length}`;
  return undefined;
}

/** The 1.6 AuthorizationKey value for a password: its octets as hexadecimal digits (upper case, as the compliance tool writes them). */
export function authorizationKeyOf(password: string): string {
  return Buffer.from(password, 'utf8').toString('hex').toUpperCase();
}
