import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import { OCPI_211_ID, ocpi211, type Definition211 } from './v211.js';
import { OCPI_221_ID, ocpi221, type Definition221 } from './v221.js';

export type SpecVersion = '2.1.1' | '2.2.1';
export type ObjectName = Definition211 | Definition221;

const documents: Record<SpecVersion, { id: string; names: ReadonlySet<string> }> = {
  '2.1.1': { id: OCPI_211_ID, names: new Set(Object.keys(ocpi211.definitions as object)) },
  '2.2.1': { id: OCPI_221_ID, names: new Set(Object.keys(ocpi221.definitions as object)) },
};

function describe(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}`);
}

/** The OCPI object schemas of both versions (v211.ts, v221.ts) behind one ajv. */
export class OcpiSpec {
  private readonly ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, strictRequired: false });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor() {
    // ajv-formats is CommonJS: imported from ESM, its default is module.exports, which carries the
    // plugin as `default` too (the one its typings describe)
    ajvFormats.default(this.ajv);
    this.ajv.addSchema(ocpi211);
    this.ajv.addSchema(ocpi221);
    // every definition compiles, so a misspelt local $ref fails here rather than in a test
    for (const version of ['2.1.1', '2.2.1'] as const)
      for (const name of documents[version].names) this.validator(version, name);
  }

  has(version: SpecVersion, name: string): name is ObjectName {
    return documents[version].names.has(name);
  }

  private validator(version: SpecVersion, name: string): ValidateFunction {
    const key = `${version}#${name}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      if (!documents[version].names.has(name)) throw new Error(`OCPI ${version} defines no ${name}`);
      validate = this.ajv.compile({ $ref: `${documents[version].id}#/definitions/${name}` });
      this.compiled.set(key, validate);
    }
    return validate;
  }

  /** What is wrong with `value` as a `name` of `version`: empty when it conforms. */
  problems(version: SpecVersion, name: ObjectName, value: unknown): string[] {
    const validate = this.validator(version, name);
    return validate(value) ? [] : describe(validate.errors);
  }

  /**
   * What is wrong with a response body: the envelope (transport_and_format "Response format"), and
   * `data` as `name` (each item when `list`), when given.
   */
  envelopeProblems(version: SpecVersion, body: unknown, data?: { name: ObjectName; list?: boolean }): string[] {
    const problems = this.problems(version, 'Envelope', body).map((p) => `envelope: ${p}`);
    if (!data || problems.length > 0) return problems;
    const value = (body as { data?: unknown }).data;
    if (!data.list) return this.problems(version, data.name, value).map((p) => `data: ${p}`);
    if (!Array.isArray(value)) return ['data: is not an array'];
    return value.flatMap((item: unknown, i) => this.problems(version, data.name, item).map((p) => `data[${i}]: ${p}`));
  }
}
