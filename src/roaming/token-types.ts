import type { TokenType } from '../ocpi/tokens/schemas-2.2.1.js';

/**
 * Which OCPI tokens a charger's id tag may be, by its 2.0.1 idToken type (docs/ROAMING.md
 * "Tokens"). OCPI keys a token by its uid and type (2.2.1 Token.uid: "combined with the Token
 * type"); matched by uid alone, a keypad PIN or an EV's MAC address equal to a card's uid was
 * taken as that card, and an app account's uid presented as a card was let in and cached.
 * - `types`: the token types it may be; undefined for any: a 1.6 id tag (1.6 has no type), and
 *   a 2.0.1 `Central` id, which is what the CSMS itself names in RequestStartTransaction and
 *   ReserveNow for an app account or an ad hoc token;
 * - `contract`: an eMAID (ISO 15118 Plug & Charge) is the token's `contract_id` (eMI3 eMA ID),
 *   not its uid; when no token has it, the uid of an RFID or OTHER token (`types`), never an app
 *   account's or an ad hoc one, which a vehicle does not present.
 */
export interface TokenMatch {
  types?: ReadonlySet<TokenType>;
  contract?: true;
}

const CARD: ReadonlySet<TokenType> = new Set(['RFID']);
const OTHER: ReadonlySet<TokenType> = new Set(['OTHER']);
const CARD_OR_OTHER: ReadonlySet<TokenType> = new Set(['RFID', 'OTHER']);

export function tokenMatchOf(idTagType: string | undefined): TokenMatch {
  switch (idTagType) {
    case 'ISO14443':
    case 'ISO15693':
      return { types: CARD };
    case 'KeyCode':
    case 'Local':
    case 'MacAddress':
      return { types: OTHER };
    case 'eMAID':
      return { contract: true, types: CARD_OR_OTHER };
    default:
      return {};
  }
}

/** An eMA ID as compared: letters in upper case, without the optional separators (eMI3 writes `NL-TNM-C00122045-K` or `NLTNMC00122045K`). */
export function contractKey(contractId: string): string {
  return contractId.replace(/[-*]/g, '').toUpperCase();
}
