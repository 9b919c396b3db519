/**
 * Money and volumes in the pricing engine (docs/TARIFFS.md "Rounding"): exact decimals, never
 * binary floats. A value is an integer (a bigint) and a count of decimals: 1.21 is 121 with 2.
 * Sums, differences and products are exact; a quotient is kept to 30 decimals, rounded half away
 * from zero, which is exact for every 4-decimal answer the engine gives (the divisors are small:
 * 3,600, a VAT factor, an amount). Inputs arrive as JSON numbers and are read through their
 * shortest decimal string (0.1 is 0.1, not 0.1000000000000000055...). Amounts are kept exact
 * through a session and rounded once, when reported, to OCPI's 4 decimals (types.asciidoc
 * "number"), half away from zero.
 */

/** Decimals kept by a division. */
const QUOTIENT_DECIMALS = 30;

const POWERS: bigint[] = [1n];
/** 10^k as a bigint, the common ones kept. */
function pow10(k: number): bigint {
  if (k < POWERS.length) return POWERS[k] as bigint;
  if (k > 400) return 10n ** BigInt(k);
  for (let i = POWERS.length; i <= k; i++) POWERS.push((POWERS[i - 1] as bigint) * 10n);
  return POWERS[k] as bigint;
}

const SMALL = 2n ** 52n;

/** a / b rounded half away from zero; b > 0 */
function divRound(a: bigint, b: bigint): bigint {
  if (a < SMALL && a > -SMALL && b < SMALL) {
    // both exact as doubles: the float quotient is at most one off, and the remainder corrects it
    const x = Number(a);
    const y = Number(b);
    let q = Math.trunc(x / y);
    let r = x - q * y;
    if (x >= 0) {
      if (r < 0) {
        q -= 1;
        r += y;
      } else if (r >= y) {
        q += 1;
        r -= y;
      }
      return BigInt(2 * r >= y ? q + 1 : q);
    }
    if (r > 0) {
      q += 1;
      r -= y;
    } else if (r <= -y) {
      q -= 1;
      r += y;
    }
    return BigInt(-2 * r >= y ? q - 1 : q);
  }
  return divRoundBig(a, b);
}

function divRoundBig(a: bigint, b: bigint): bigint {
  const q = a / b;
  const r = a - q * b;
  if (r === 0n) return q;
  const twice = r < 0n ? -2n * r : 2n * r;
  if (twice < b) return q;
  return a < 0n ? q - 1n : q + 1n;
}

export class Decimal {
  /** the value is `units` times 10^-`scale`; scale >= 0 */
  constructor(
    readonly units: bigint,
    readonly scale: number,
  ) {}

  /** The decimal a JSON number was written as (its shortest round-trip string). */
  static of(n: number): Decimal {
    if (!Number.isFinite(n)) throw new RangeError(`${n} is not a finite number`);
    if (Number.isSafeInteger(n)) return new Decimal(BigInt(n), 0);
    const text = String(n);
    const e = text.indexOf('e');
    const mantissa = e < 0 ? text : text.slice(0, e);
    const exponent = e < 0 ? 0 : Number(text.slice(e + 1));
    const dot = mantissa.indexOf('.');
    const digits = dot < 0 ? mantissa : mantissa.slice(0, dot) + mantissa.slice(dot + 1);
    const scale = (dot < 0 ? 0 : mantissa.length - dot - 1) - exponent;
    const units = BigInt(digits);
    return scale >= 0 ? new Decimal(units, scale) : new Decimal(units * pow10(-scale), 0);
  }

  private static aligned(a: Decimal, b: Decimal): [bigint, bigint, number] {
    if (a.scale === b.scale) return [a.units, b.units, a.scale];
    if (a.scale > b.scale) return [a.units, b.units * pow10(a.scale - b.scale), a.scale];
    return [a.units * pow10(b.scale - a.scale), b.units, b.scale];
  }

  plus(o: Decimal): Decimal {
    if (o.units === 0n) return this;
    if (this.units === 0n) return o;
    const [a, b, s] = Decimal.aligned(this, o);
    return new Decimal(a + b, s);
  }

  minus(o: Decimal): Decimal {
    if (o.units === 0n) return this;
    const [a, b, s] = Decimal.aligned(this, o);
    return new Decimal(a - b, s);
  }

  times(o: Decimal): Decimal {
    return new Decimal(this.units * o.units, this.scale + o.scale);
  }

  /** The quotient to 30 decimals (or this value's own, when it has more), half away from zero. */
  dividedBy(o: Decimal): Decimal {
    if (o.units === 0n) throw new RangeError('division by zero');
    const scale = Math.max(QUOTIENT_DECIMALS, this.scale);
    const numerator = this.units * pow10(scale + o.scale - this.scale);
    const q = o.units < 0n ? divRound(-numerator, -o.units) : divRound(numerator, o.units);
    return new Decimal(q, scale);
  }

  /** This value divided by 10^k, exactly. */
  shifted(k: number): Decimal {
    return new Decimal(this.units, this.scale + k);
  }

  /** Rounded to `decimals`, half away from zero. */
  rounded(decimals: number): Decimal {
    if (this.scale <= decimals) return this;
    return new Decimal(divRound(this.units, pow10(this.scale - decimals)), decimals);
  }

  /** The smallest whole multiple of `step` (a positive integer) that is not below this value. */
  ceilToMultiple(step: number): Decimal {
    const m = BigInt(step) * pow10(this.scale);
    let q = this.units / m;
    if (q * m < this.units) q += 1n;
    return new Decimal(q * BigInt(step), 0);
  }

  abs(): Decimal {
    return this.units < 0n ? new Decimal(-this.units, this.scale) : this;
  }

  isZero(): boolean {
    return this.units === 0n;
  }

  /** -1, 0 or 1 as this value is below, equal to or above `o`. */
  compare(o: Decimal): number {
    const [a, b] = Decimal.aligned(this, o);
    return a < b ? -1 : a > b ? 1 : 0;
  }

  lessThan(o: Decimal): boolean {
    return this.compare(o) < 0;
  }

  greaterThan(o: Decimal): boolean {
    return this.compare(o) > 0;
  }

  equals(o: Decimal): boolean {
    return this.compare(o) === 0;
  }

  /** The double nearest to this value. */
  toNumber(): number {
    const u = this.units;
    if (u >= -9007199254740991n && u <= 9007199254740991n && this.scale <= 22) {
      // both exact as doubles, and a correctly rounded division gives the nearest double
      return this.scale === 0 ? Number(u) : Number(u) / 10 ** this.scale;
    }
    return Number(this.toString());
  }

  toString(): string {
    return this.scale === 0 ? this.units.toString() : `${this.units}e-${this.scale}`;
  }
}

export const ZERO = new Decimal(0n, 0);

/** OCPI numbers carry 4 decimals. */
export const REPORTED_DECIMALS = 4;

const parsed = new Map<number, Decimal>();

/** A JSON number as a decimal; the same few volumes and prices recur, so the last 4,096 are kept. */
export function dec(n: number): Decimal {
  let d = parsed.get(n);
  if (d === undefined) {
    d = Decimal.of(n);
    if (parsed.size >= 4096) parsed.clear();
    parsed.set(n, d);
  }
  return d;
}

/** 10^k as the nearest double, k < 60 (read from text: `10 ** k` is not always correctly rounded). */
const DOUBLE_POWERS: readonly number[] = Array.from({ length: 60 }, (_, k) => Number(`1e${k}`));

/** The reported form of an amount: 4 decimals, half away from zero, as a JSON number. */
export function reported(d: Decimal): number {
  if (d.isZero()) return 0;
  const cut = d.scale - REPORTED_DECIMALS;
  if (cut > 0 && cut < DOUBLE_POWERS.length) {
    // the value in 4-decimal units, as a double: the conversion, the power of ten and the division
    // are each within half an ulp, so below 1e9 units the double is within 1e-6 of the exact
    // value; unless it is that close to a half, rounding the double rounds the decimal. (Amounts
    // priced per second keep 30 decimals: their units do not fit a double exactly, and need not.)
    const x = Number(d.units) / (DOUBLE_POWERS[cut] as number);
    const size = Math.abs(x);
    if (size < 1e9) {
      const whole = Math.floor(size);
      const fraction = size - whole;
      if (Math.abs(fraction - 0.5) > 1e-6) {
        const units = fraction > 0.5 ? whole + 1 : whole;
        return (x < 0 ? -units : units) / 10_000;
      }
    }
  }
  return d.rounded(REPORTED_DECIMALS).toNumber();
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

/**
 * `volume` units at `price` per unit, times `vatFactor` (1 + VAT/100; none when the component has
 * no VAT). A volume counted in smaller units (seconds of an hourly price) gives `per` units to the
 * priced one: the products are divided by it last, so that an amount that is exact (5 seconds at
 * 0.18 an hour is 0.00025) is not rounded before it is reported.
 */
export function costOf(volume: Decimal, price: Decimal, vatFactor: Decimal | undefined, per?: Decimal): Amount {
  const product = volume.times(price);
  const excl = per === undefined ? product : product.dividedBy(per);
  if (vatFactor === undefined) return { excl, incl: excl };
  return { excl, incl: per === undefined ? excl.times(vatFactor) : product.times(vatFactor).dividedBy(per) };
}

/** The OCPI Price of an amount, as reported. */
export function priceOf(a: Amount): { excl_vat: number; incl_vat: number } {
  if (a === NO_AMOUNT) return { excl_vat: 0, incl_vat: 0 };
  return { excl_vat: reported(a.excl), incl_vat: reported(a.incl) };
}

/**
 * A quantity (kWh, a bound of a restriction) exactly: integer millionths when it has at most 6
 * decimals, which doubles hold exactly and compare fast, and a decimal for the rest.
 */
export interface Quantity {
  readonly micro: number;
  readonly rest: Decimal | undefined;
}

/** `v` in exact millionths, or undefined when it has more than 6 decimals (or is too large). */
export function microOf(v: number): number | undefined {
  const m = Math.round(v * 1e6);
  // v is the double nearest to m millionths: that decimal is the value the sender wrote
  return m / 1e6 === v && Number.isSafeInteger(m) ? m : undefined;
}

export function quantityOf(v: number): Quantity {
  const micro = microOf(v);
  return micro === undefined ? { micro: 0, rest: dec(v) } : { micro, rest: undefined };
}

function exactOf(q: Quantity): Decimal {
  const micro = q.micro === 0 ? ZERO : new Decimal(BigInt(q.micro), 6);
  return q.rest === undefined ? micro : micro.plus(q.rest);
}

/** -1, 0 or 1 as `a` is below, equal to or above `b`. */
export function compareQuantities(a: Quantity, b: Quantity): number {
  if (a.rest === undefined && b.rest === undefined) return Math.sign(a.micro - b.micro);
  return exactOf(a).compare(exactOf(b));
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

  /** Adds `v`; `micro` is `microOf(v)` when the caller has it already (one volume goes to several sums). */
  add(v: number, micro: number | undefined = microOf(v)): void {
    this.cached = undefined;
    if (micro !== undefined) {
      const next = this.micro + micro;
      if (Number.isSafeInteger(next)) {
        this.micro = next;
        return;
      }
    }
    this.rest = (this.rest ?? ZERO).plus(dec(v));
  }

  /** The sum so far, as a value that does not change when more is added. */
  quantity(): Quantity {
    return { micro: this.micro, rest: this.rest };
  }

  value(): Decimal {
    this.cached ??= exactOf(this.quantity());
    return this.cached;
  }
}
