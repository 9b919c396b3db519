import { Ajv } from 'ajv';
import ajvFormats from 'ajv-formats';
import { expect } from 'chai';
import { OcppSchemas } from '../../src/ocpp/schemas.js';
import { isCommonDateTime, parseInstant, parseRealInstant } from '../../src/rfc3339.js';

/** Date-times read directly in their common form: the same answers as Date.parse and ajv-formats. */

/** Strings around the common form: offsets, other separators, dates that do not exist, odd digits. */
const EDGES = [
  '2024-03-08T16:10:00Z',
  '2024-03-08T16:10:00.123Z',
  '2024-03-08T16:10:00.1Z',
  '2024-03-08T16:10:00.123456789Z',
  '2024-03-08T16:10:00+02:00',
  '2024-03-08T16:10:00-0230',
  '2024-03-08t16:10:00z',
  '2024-03-08 16:10:00Z',
  '2024-03-08T16:10:00',
  '2024-03-08T16:10:00.Z',
  '2024-03-08T16:10:00.12aZ',
  '2024-02-29T23:59:59Z',
  '2023-02-29T00:00:00Z',
  '2024-13-45T99:99:99Z',
  '2024-00-10T10:00:00Z',
  '2024-01-00T10:00:00Z',
  '2025-04-31T00:00:00Z',
  '2025-01-01T24:00:00Z',
  '2025-01-01T23:60:00Z',
  '2016-12-31T23:59:60Z',
  '0050-01-01T00:00:00Z',
  '0000-02-29T00:00:00Z',
  '1600-02-29T12:00:00Z',
  '1900-02-29T12:00:00Z',
  '2000-02-29T12:00:00Z',
  '1969-12-31T23:59:59.001Z',
  '2024-12-31T23:59:59.999Z',
  '2a25-01-01T00:00:00Z',
  '2025-01-01T00:00:00.1x3Z',
  '2025-0 -01T00:00:00Z',
  '+2025-01-01T00:00:00Z',
  '2025-01-01T00:00:00ZZ',
  '',
  'Z',
];

/** What Date.parse reads, a date and time without a zone designator taken as UTC. */
const utcParse = (s: string) => Date.parse(/^\d{4}-\d\d-\d\d[Tt ][\d:.]+$/.test(s) ? `${s}Z` : s);

describe('RFC 3339 date-times in their common form', function () {
  it('reads an instant as Date.parse does, and hands any other form to it', function () {
    for (const s of EDGES) expect(parseInstant(s), s).to.deep.equal(utcParse(s));
    // every day of four centuries, at a varying time of day, with and without milliseconds
    for (let day = -80_000; day < 80_000; day += 7) {
      const iso = new Date(day * 86_400_000 + (day % 86_400) * 1_000 + (day % 1000)).toISOString();
      expect(parseInstant(iso), iso).to.equal(Date.parse(iso));
      const whole = `${iso.slice(0, 19)}Z`;
      expect(parseInstant(whole), whole).to.equal(Date.parse(whole));
    }
  });

  it("a date and time without a zone designator is UTC, whatever the host's time zone", function () {
    const zone = process.env.TZ;
    try {
      for (const tz of ['America/New_York', 'Europe/Amsterdam', 'Asia/Kolkata']) {
        process.env.TZ = tz;
        // was 14:00 or 08:00 UTC, as the host's clock read it (OCPI: no designator means UTC)
        expect(parseRealInstant('2024-05-06T10:00:00'), tz).to.equal(Date.UTC(2024, 4, 6, 10));
        expect(parseInstant('2024-05-06T10:00:00.250'), tz).to.equal(Date.UTC(2024, 4, 6, 10, 0, 0, 250));
        expect(parseInstant('2024-05-06T10:00:00+02:00'), tz).to.equal(Date.UTC(2024, 4, 6, 8));
      }
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it('an OCPP date-time passes or fails the schemas exactly as under ajv-formats alone', async function () {
    const schemas: OcppSchemas = new OcppSchemas();
    await schemas.load();
    const reference = new Ajv({ strict: false });
    ajvFormats.default(reference);
    const byAjvFormats = reference.compile({ type: 'string', format: 'date-time' });
    // Heartbeat's answer is one required date-time: the format decides alone
    const accepted = (currentTime: string): boolean => {
      try {
        schemas.checkResponse('ocpp1.6', 'Heartbeat', { currentTime });
        return true;
      } catch {
        return false;
      }
    };
    const strings = [...EDGES];
    // single characters changed in common-form strings: digits, separators, out-of-range fields
    const base = '2024-02-29T23:59:59.250Z';
    for (let i = 0; i < base.length; i++)
      for (const c of ['0', '1', '3', '6', '9', 'T', 'Z', ':', '-', '.', ' ', 'x'])
        strings.push(base.slice(0, i) + c + base.slice(i + 1));
    for (const s of strings) {
      const expected = byAjvFormats(s);
      if (isCommonDateTime(s)) expect(expected, s).to.equal(true);
      expect(accepted(s), s).to.equal(expected);
    }
    expect(accepted('2024-03-08T16:10:00+02:00')).to.equal(true);
    expect(accepted('2023-02-29T00:00:00Z')).to.equal(false);
    expect(accepted('2024-03-08T16:10:00')).to.equal(false);
  });
});
