import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'chai';

const ROOT = resolve(import.meta.dirname, '../../..');

interface Format {
  cents(amount: unknown): string;
}

/** The console's own module, as the browser loads it (it has no types of its own). */
async function format(): Promise<Format> {
  const url = pathToFileURL(resolve(ROOT, 'src/dashboard/app/format.js')).href;
  return (await import(url)) as Format;
}

describe('the console shows amounts to the cent', function () {
  it('rounds half away from zero on the digits the API wrote, in the millions too', async function () {
    const { cents } = await format();
    // 0.605 and 1234567.005 are below their halves as binary doubles; toFixed(10) lost the second
    expect(cents(0.605)).to.equal('0.61');
    expect(cents(1234567.005)).to.equal('1234567.01');
    expect(cents(-1234567.005)).to.equal('-1234567.01');
    expect(cents(2.675)).to.equal('2.68');
    expect(cents(99.995)).to.equal('100.00');
    expect(cents('3.145')).to.equal('3.15');
  });

  it('keeps whole amounts, large ones and amounts below a cent', async function () {
    const { cents } = await format();
    expect(cents(0)).to.equal('0.00');
    expect(cents(7)).to.equal('7.00');
    expect(cents(123456789012345.67)).to.equal('123456789012345.67');
    expect(cents(0.1 + 0.2)).to.equal('0.30');
    expect(cents(-0.004)).to.equal('0.00');
    expect(cents(5e-7)).to.equal('0.00');
    expect(cents(1e21)).to.equal('1e+21');
    expect(cents('n/a')).to.equal('n/a');
  });
});
