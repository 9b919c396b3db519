import { expect } from 'chai';
import Type from '#typebox';
import { Compile } from '#typebox/compile';
import { RequestValidationError } from '../../src/gateway/errors.js';
import { RequestPart } from '../../src/gateway/validation.js';

function detail(part: RequestPart, input: unknown): RequestValidationError['detail'] {
  try {
    part.parse(input);
  } catch (err) {
    if (err instanceof RequestValidationError) return err.detail;
    throw err;
  }
  throw new Error('expected a validation error');
}

describe('request validation (422 HTTPValidationError entries)', () => {
  const body = new RequestPart(
    'body',
    Type.Object({
      id: Type.String(),
      kwh: Type.Number(),
      party_id: Type.String({ minLength: 3, maxLength: 3 }),
      tags: Type.Optional(Type.Array(Type.String())),
    }),
  );

  it('reports a missing field with loc, msg, type, input and ctx', () => {
    const [d] = detail(body, { kwh: 1, party_id: 'ABC' });
    expect(d).to.deep.equal({
      loc: ['body', 'id'],
      msg: 'Field required',
      type: 'missing',
      input: { kwh: 1, party_id: 'ABC' },
      ctx: {},
    });
  });

  it('reports a wrong type and a too long string at their path', () => {
    const ds = detail(body, { id: 'x', kwh: 'lots', party_id: 'ABCD', tags: ['ok', 5] });
    const byLoc = Object.fromEntries(ds.map((d) => [d.loc.join('.'), d]));
    expect(byLoc['body.kwh']?.type).to.equal('float_type');
    expect(byLoc['body.kwh']?.input).to.equal('lots');
    expect(byLoc['body.party_id']?.type).to.equal('string_too_long');
    expect(byLoc['body.party_id']?.ctx).to.deep.equal({ max_length: 3 });
    expect(byLoc['body.tags.1']?.type).to.equal('string_type');
  });

  it("names every constant of a union a value is none of, and reports past a body's eighth bad field", () => {
    const results = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I'];
    const union = new RequestPart('body', Type.Object({ result: Type.Union(results.map((r) => Type.Literal(r))) }));
    const [d] = detail(union, { result: 'Z' });
    // was the first 8 (TypeBox's default limit of errors): a valid 'I' was not named
    expect(d?.ctx.expected).to.deep.equal(results);
    const many = new RequestPart(
      'body',
      Type.Object(Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`f${i}`, Type.Integer()]))),
    );
    const bad = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`f${i}`, 'x']));
    expect(detail(many, bad)).to.have.length(12);
    // 30 fields each none of 7 values: was 25 (the errors of 25 fields filled TypeBox's limit)
    const days = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'];
    const week = Type.Union(days.map((d) => Type.Literal(d)));
    const list = new RequestPart('body', Type.Object({ days: Type.Array(week) }));
    expect(detail(list, { days: Array.from({ length: 30 }, () => 'NEVER') })).to.have.length(30);
    // an enumeration a union holds twice names each value once: was each day twice
    const twice = new RequestPart('body', Type.Object({ day: Type.Union([week, week]) }));
    expect(detail(twice, { day: 'NEVER' })[0]?.ctx.expected).to.deep.equal(days);
  });

  it('converts query strings to the schema types before checking', () => {
    const q = new RequestPart(
      'query',
      Type.Object({
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
        online: Type.Optional(Type.Boolean()),
      }),
    );
    expect(q.parse({ limit: '20', online: 'true' })).to.deep.equal({ limit: 20, online: true });
    const [d] = detail(q, { limit: '0' });
    expect(d?.loc).to.deep.equal(['query', 'limit']);
    expect(d?.type).to.equal('greater_than_equal');
  });
});

describe('query and path values: the scalar fast path agrees with TypeBox, read strictly', () => {
  const schema = Type.Object({
    date_from: Type.Optional(Type.String({ format: 'date-time' })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000, default: 0 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    ratio: Type.Optional(Type.Number()),
    all: Type.Optional(Type.Boolean({ default: false })),
  });
  const part = new RequestPart('query', schema);
  const typebox = Compile(schema);
  /** what the part answered before the fast path: TypeBox's Convert, Default and Check */
  const slow = (input: Record<string, unknown>): unknown => {
    // Convert changes the object it is given: a copy, so that the same input can be parsed again
    const value = typebox.Default(typebox.Convert({ ...input }));
    return typebox.Check(value) ? value : 'refused';
  };
  const fast = (input: Record<string, unknown>): unknown => {
    try {
      return part.parse(input);
    } catch (err) {
      if (err instanceof RequestValidationError) return 'refused';
      throw err;
    }
  };

  const inputs: Array<Record<string, unknown>> = [
    {},
    { limit: '50' },
    { limit: '50', offset: '100' },
    { offset: '0', all: 'true' },
    { all: 'false', ratio: '0.5' },
    { ratio: '-1e3' },
    { ratio: '.5' },
    { date_from: '2026-11-24T07:00:00Z', limit: '1' },
    { date_from: 'yesterday' },
    { limit: '0' },
    { limit: '1001' },
    { limit: '5x' },
    { limit: '' },
    { limit: ['1', '2'] },
    { all: 'yes' },
    { ratio: 'NaN' },
    { unknown: 'x' },
    // an own `__proto__` key, as the query string parser makes of ?__proto__=x
    JSON.parse('{"__proto__":"x","limit":"2"}') as Record<string, unknown>,
  ];
  for (const input of inputs)
    it(`parses ${JSON.stringify(input)} as TypeBox does`, () => {
      expect(fast(input)).to.deep.equal(slow(input));
    });

  // TypeBox's Convert reads these loosely (limit=1.5 served a page of 1, limit=0x10 one of 16)
  const loose: Array<Record<string, unknown>> = [
    { limit: '+5' },
    { limit: '1.0' },
    { limit: '1.5' },
    { limit: '0x10' },
    { limit: ' 5' },
    { limit: 'true' },
    { offset: '1e1' },
    { all: '1' },
    { all: '0' },
    { ratio: ' 1' },
    { ratio: '0x10' },
    { limit: '1.5', date_from: 'yesterday' },
  ];
  for (const input of loose)
    it(`refuses ${JSON.stringify(input)}, which does not read as its type (TypeBox: ${JSON.stringify(slow(input))})`, () => {
      expect(fast(input)).to.equal('refused');
    });

  it('fills the defaults and converts the numbers of a list query', () => {
    expect(part.parse({ limit: '50' })).to.deep.equal({ limit: 50, offset: 0, all: false });
  });
});
