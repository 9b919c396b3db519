import { expect } from 'chai';
import Type from '#typebox';
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
