/**
 * The number of bytes of a size setting such as BODY_LIMIT or PARTNER_RESPONSE_LIMIT
 * (`<digits>b|kb|mb`, checked by the settings schema); kb and mb are powers of 1024, as the
 * body parser reads BODY_LIMIT.
 */
export function byteSize(text: string): number {
  const m = /^([0-9]+)(b|kb|mb)$/.exec(text);
  if (!m) throw new Error(`not a size: ${JSON.stringify(text)}`);
  const unit = m[2] === 'mb' ? 1024 * 1024 : m[2] === 'kb' ? 1024 : 1;
  return Number(m[1]) * unit;
}
