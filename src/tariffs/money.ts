import { Decimal as DecimalJs } from 'decimal.js';

/**
 * Money and volumes in the pricing engine (docs/TARIFFS.md "Rounding"): decimal arithmetic with
 * 34 significant digits, never binary floats. Inputs arrive as JSON numbers and are read through
 * their shortest decimal string (0.1 is 0.1, not 0.1000000000000000055...). Amounts are kept
 * exact through a session and rounded once, when reported, to OCPI's 4 decimals (types.asciidoc
 * "number"), half away from zero.
 */
export const Decimal = DecimalJs.clone({ precision: 34, rounding: DecimalJs.ROUND_HALF_UP });
export type Decimal = InstanceType<typeof Decimal>;

export const ZERO = new Decimal(0);

/** OCPI numbers carry 4 decimals. */
export const REPORTED_DECIMALS = 4;

const parsed = new Map<number, Decimal>();

/** A JSON number as a decimal; the same few volumes and prices recur, so the last 4,096 are kept. */
export function dec(n: number): Decimal {
  let d = parsed.get(n);
  if (d === undefined) {
    d = new Decimal(n);
    if (parsed.size >= 4096) parsed.clear();
    parsed.set(n, d);
  }
  return d;
}

/** The reported form of an amount: 4 decimals, half away from zero, as a JSON number. */
export function reported(d: Decimal): number {
  if (d.isZero()) return 0;
  // one rounding pass to a string, then the shortest double of that decimal
  return Number(d.toFixed(REPORTED_DECIMALS, Decimal.ROUND_HALF_UP));
}

/** A price excluding and including VAT, exact. */
export interface Amount {
  excl: Decimal;
  incl: Decimal;
}

export const NO_AMOUNT: Amount = { excl: ZERO, incl: ZERO };

export function plus(a: Amount, b: Amount): Amount {
  if (b === NO_AMOUNT) return a;
  if (a === NO_AMOUNT) return b;
  return { excl: a.excl.plus(b.excl), incl: a.incl.plus(b.incl) };
}

/** `volume` units at `price` per unit, times `vatFactor` (1 + VAT/100; none when the component has no VAT). */
export function costOf(volume: Decimal, price: Decimal, vatFactor: Decimal | undefined): Amount {
  const excl = volume.times(price);
  return { excl, incl: vatFactor === undefined ? excl : excl.times(vatFactor) };
}

/** The OCPI Price of an amount, as reported. */
export function priceOf(a: Amount): { excl_vat: number; incl_vat: number } {
  if (a === NO_AMOUNT) return { excl_vat: 0, incl_vat: 0 };
  return { excl_vat: reported(a.excl), incl_vat: reported(a.incl) };
}

/**
 * A running sum of volumes, exact: volumes with at most 6 decimals (nearly all a charger's meter
 * gives) are added as integer millionths, which doubles hold exactly; any other goes through a
 * decimal. As exact as summing decimals, at the cost of float additions.
 */
export class VolumeSum {
  private micro = 0;
  private rest: Decimal | undefined;
  private cached: Decimal | undefined;

  add(v: number): void {
    this.cached = undefined;
    const m = Math.round(v * 1e6);
    // v is the double nearest to m millionths: that decimal is the volume the sender wrote
    if (m / 1e6 === v) {
      const next = this.micro + m;
      if (Number.isSafeInteger(next)) {
        this.micro = next;
        return;
      }
    }
    this.rest = (this.rest ?? ZERO).plus(dec(v));
  }

  isZero(): boolean {
    return this.micro === 0 && (this.rest === undefined || this.rest.isZero());
  }

  value(): Decimal {
    if (this.cached) return this.cached;
    const micro = this.micro === 0 ? ZERO : new Decimal(`${this.micro}e-6`);
    this.cached = this.rest === undefined ? micro : micro.plus(this.rest);
    return this.cached;
  }
}
