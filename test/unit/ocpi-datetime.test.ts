import { expect } from 'chai';
import Type from '#typebox';
import { Compile } from '#typebox/compile';
import { normalizeDateTimes, toUtc } from '../../src/ocpi/core/datetime.js';
import { DateTime } from '../../src/ocpi/core/schemas.js';

/** OCPI DateTime: what is accepted, and the UTC form it is stored and served in. */
describe('OCPI DateTime', () => {
  const check = Compile(DateTime);

  it('accepts the forms the specifications list, and offsets; refuses other shapes', () => {
    for (const ok of [
      '2015-06-29T20:39:09Z',
      '2015-06-29T20:39:09',
      '2016-12-29T17:45:09.2Z',
      '2016-12-29T17:45:09.2',
      '2018-01-01T01:08:01.123Z',
      '2018-01-01T01:08:01.123',
      '2015-06-29T22:39:09+02:00',
      '2015-06-29T20:39:09+00:00',
    ])
      expect(check.Check(ok), ok).to.equal(true);
    for (const bad of [
      '2015-06-29',
      '2015-06-29T20:39',
      '2015-06-29 20:39:09Z',
      '2015-13-29T20:39:09Z',
      '2015-06-29T24:00:00Z',
      '2015-06-29T20:39:09+0200',
      '20150629T203909Z',
      '',
    ])
      expect(check.Check(bad), bad).to.equal(false);
  });

  it('writes every timestamp in UTC with Z, keeping the precision that was sent', () => {
    expect(toUtc('2015-06-29T20:39:09Z')).to.equal('2015-06-29T20:39:09Z');
    expect(toUtc('2015-06-29T20:39:09')).to.equal('2015-06-29T20:39:09Z');
    expect(toUtc('2016-12-29T17:45:09.2')).to.equal('2016-12-29T17:45:09.2Z');
    // string(25) in 2.2.1: a fraction past the millisecond is cut there
    expect(toUtc('2026-11-30T10:00:00.123456789Z')).to.equal('2026-11-30T10:00:00.123Z');
    expect(toUtc('2026-11-30T10:00:00.1234567')).to.equal('2026-11-30T10:00:00.123Z');
    expect(toUtc('2026-11-30T10:00:00.123Z')).to.equal('2026-11-30T10:00:00.123Z');
    expect(toUtc('2015-06-29T22:39:09+02:00')).to.equal('2015-06-29T20:39:09Z');
    expect(toUtc('2015-06-29T20:39:09+00:00')).to.equal('2015-06-29T20:39:09Z');
    expect(toUtc('2015-06-29T00:39:09.5-01:30')).to.equal('2015-06-29T02:09:09.500Z');
    // across midnight and a year
    expect(toUtc('2016-01-01T00:30:00+01:00')).to.equal('2015-12-31T23:30:00Z');
    // a leap day exists in 2024 and 2000, not in 2025 or 1900; no 31st of April; nothing before year 1
    expect(toUtc('2024-02-29T10:00:00')).to.equal('2024-02-29T10:00:00Z');
    expect(toUtc('2000-02-29T10:00:00Z')).to.equal('2000-02-29T10:00:00Z');
    for (const none of ['2025-02-29T10:00:00Z', '1900-02-29T10:00:00', '2026-04-31T10:00:00', '0000-06-01T10:00:00Z'])
      expect(toUtc(none), none).to.equal(undefined);
    expect(toUtc('0001-01-01T00:30:00+01:00')).to.equal(undefined);
    expect(toUtc('9999-12-31T23:30:00-01:00')).to.equal(undefined);
  });

  it('rewrites the DateTime fields a schema declares, in objects, arrays and optional fields, and nothing else', () => {
    const schema = Type.Object({
      last_updated: DateTime,
      name: Type.String(),
      periods: Type.Array(Type.Object({ start_date_time: DateTime })),
      end: Type.Optional(Type.Union([DateTime, Type.Null()])),
      note: Type.Union([DateTime, Type.String()]),
    });
    const value = {
      last_updated: '2015-06-29T22:39:09+02:00',
      name: '2015-06-29T22:39:09+02:00',
      periods: [{ start_date_time: '2015-06-29T20:00:00' }, { start_date_time: '2015-06-29T20:00:00Z' }],
      end: '2015-06-30T01:00:00+01:00',
      note: 'tomorrow',
      extra: '2015-06-29T22:39:09+02:00',
    };
    normalizeDateTimes(schema, value);
    expect(value).to.deep.equal({
      last_updated: '2015-06-29T20:39:09Z',
      name: '2015-06-29T22:39:09+02:00',
      periods: [{ start_date_time: '2015-06-29T20:00:00Z' }, { start_date_time: '2015-06-29T20:00:00Z' }],
      end: '2015-06-30T00:00:00Z',
      note: 'tomorrow',
      extra: '2015-06-29T22:39:09+02:00',
    });
  });

  it('names the path of every DateTime that is no real instant, and leaves it as sent', () => {
    const schema = Type.Object({
      last_updated: DateTime,
      evses: Type.Array(
        Type.Object({ uid: Type.String(), connectors: Type.Array(Type.Object({ last_updated: DateTime })) }),
      ),
      end: Type.Optional(Type.Union([DateTime, Type.Null()])),
    });
    const value = {
      last_updated: '2025-02-29T10:00:00Z',
      evses: [
        { uid: 'E1', connectors: [{ last_updated: '2015-06-29T20:00:00' }] },
        { uid: 'E2', connectors: [{ last_updated: '2015-06-29T20:00:00Z' }, { last_updated: '2026-04-31T10:00:00' }] },
      ],
      end: '0001-01-01T00:30:00+01:00',
    };
    const invalid: Array<Array<string | number>> = [];
    normalizeDateTimes(schema, value, invalid, ['body']);
    expect(invalid).to.deep.equal([
      ['body', 'last_updated'],
      ['body', 'evses', 1, 'connectors', 1, 'last_updated'],
      ['body', 'end'],
    ]);
    expect(value.last_updated).to.equal('2025-02-29T10:00:00Z');
    expect(value.evses[0]?.connectors[0]?.last_updated).to.equal('2015-06-29T20:00:00Z');
    expect(value.evses[1]?.connectors[1]?.last_updated).to.equal('2026-04-31T10:00:00');
    // the same schema a second time (its normalization is made once) gives the same answer
    const again = { last_updated: '2015-06-29T22:39:09+02:00', evses: [], end: null };
    const none: Array<Array<string | number>> = [];
    normalizeDateTimes(schema, again, none);
    expect(again).to.deep.equal({ last_updated: '2015-06-29T20:39:09Z', evses: [], end: null });
    expect(none).to.deep.equal([]);
  });

  it('names a DateTime that is no real instant once when several members of a union declare it', () => {
    // the operator's token PUT takes a 2.2.1 or a 2.1.1 token: both declare last_updated
    const schema = Type.Union([
      Type.Object({ uid: Type.String(), last_updated: DateTime }),
      Type.Object({ auth_id: Type.String(), last_updated: DateTime }),
    ]);
    const invalid: Array<Array<string | number>> = [];
    normalizeDateTimes(schema, { uid: 'T', last_updated: '2025-02-29T10:00:00Z' }, invalid);
    expect(invalid).to.deep.equal([['last_updated']]);
    const value = { uid: 'T', last_updated: '2026-01-01T10:00:00+02:00' };
    normalizeDateTimes(schema, value, invalid);
    expect(value.last_updated).to.equal('2026-01-01T08:00:00Z');
  });

  it('returns a bare DateTime rewritten, and any value of a schema without DateTimes untouched', () => {
    expect(normalizeDateTimes(DateTime, '2015-06-29T22:39:09+02:00')).to.equal('2015-06-29T20:39:09Z');
    const plain = { a: '2015-06-29T22:39:09+02:00' };
    expect(normalizeDateTimes(Type.Object({ a: Type.String() }), plain)).to.equal(plain);
    expect(plain.a).to.equal('2015-06-29T22:39:09+02:00');
  });
});
