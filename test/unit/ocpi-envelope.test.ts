import { expect } from 'chai';
import { SerializedJson, ocpiEnvelope } from '../../src/ocpi/core/envelope.js';

/** A cached list page goes out inside the success envelope without being parsed again. */
describe('the OCPI envelope around a cached page', () => {
  it('writes the page bytes as data, with a timestamp in whole seconds, and reuses the bytes within the second', () => {
    const page = Buffer.from('[{"id":"LOC1"}]');
    const first = ocpiEnvelope(new SerializedJson(page));
    const second = ocpiEnvelope(new SerializedJson(page));
    expect(Buffer.isBuffer(first)).to.equal(true);
    const parsed = JSON.parse(String(first)) as {
      status_code: number;
      status_message: string;
      timestamp: string;
      data: unknown;
    };
    expect(parsed.status_code).to.equal(1000);
    expect(parsed.status_message).to.equal('Success');
    expect(parsed.data).to.deep.equal([{ id: 'LOC1' }]);
    expect(parsed.timestamp).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(Math.abs(Date.parse(parsed.timestamp) - Date.now())).to.be.below(2000);
    // same second (almost always): the very same bytes; else a fresh envelope of the same page
    if (JSON.parse(String(second)).timestamp === parsed.timestamp) expect(second).to.equal(first);
    const other = ocpiEnvelope(new SerializedJson(Buffer.from('[]')));
    expect((JSON.parse(String(other)) as { data: unknown }).data).to.deep.equal([]);
  });

  it('builds an ordinary envelope for other data, and none for nothing', () => {
    const env = ocpiEnvelope({ a: 1 });
    expect(env).to.include({ status_code: 1000, status_message: 'Success' });
    expect(env).to.have.property('data').that.deep.equals({ a: 1 });
    expect(ocpiEnvelope(undefined)).to.not.have.property('data');
  });
});
