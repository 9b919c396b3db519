/**
 * Which OCPI tokens authorize a charge (docs/ROAMING.md "Tokens"): ours, those of a party a
 * registered eMSP link speaks for (onboarded as it, or a platform whose credentials list it), and
 * those of a party no link names (loaded by the operator, docs/OCPI.md "Who sees what"). A
 * partner that ended its link (credentials DELETE, or our unregister) bills none of its tokens'
 * charges any more, online (Authorize) or offline (the local list).
 */

/** An eMSP link (`registered`: a registered one; else any) speaks for the party of token row `o`. */
const emspLink = (registered: boolean): string => `EXISTS (SELECT 1 FROM ocpi_partner p
  WHERE ${registered ? "p.status = 'registered'" : '1 = 1'}
  AND ((p.country_code = o.country_code AND p.party_id = o.party_id AND p.role = 'EMSP')
    OR EXISTS (SELECT 1 FROM ocpi_partner_party pp WHERE pp.partner_id = p.id
      AND pp.country_code = o.country_code AND pp.party_id = o.party_id AND pp.role = 'EMSP')))`;

/**
 * The last change of the registered eMSP link that speaks for the party of token row `o` (its
 * partner record's `updated_at`), null when none does: a link that ended and was made again is
 * another link (authorization.ts remembers an eMSP's answer for the link that gave it).
 */
export const TOKEN_LINK_AT = `(SELECT max(p.updated_at) FROM ocpi_partner p
  WHERE p.status = 'registered'
  AND ((p.country_code = o.country_code AND p.party_id = o.party_id AND p.role = 'EMSP')
    OR EXISTS (SELECT 1 FROM ocpi_partner_party pp WHERE pp.partner_id = p.id
      AND pp.country_code = o.country_code AND pp.party_id = o.party_id AND pp.role = 'EMSP')))`;

/**
 * A condition on the `ocpi_object` row `o` of a token: it counts. Its two parameters are our
 * own country_code and party_id.
 */
export const TOKEN_COUNTS = `((o.country_code = ? AND o.party_id = ?) OR ${emspLink(true)} OR NOT ${emspLink(false)})`;
