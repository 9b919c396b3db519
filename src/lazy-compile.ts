import type { Static, TSchema } from '#typebox';
import { Compile, type Validator } from '#typebox/compile';

/** What `Compile(schema)` returns for a schema without a context. */
type Compiled<T extends TSchema> = Validator<Record<never, never>, T>;

/**
 * A TypeBox validator compiled on its first use instead of when its module loads or its route is
 * built: a process compiles only the schemas it meets (a worker never serves HTTP, a process no
 * partner calls never checks an OCPI body), and start-up does not wait for them. Once compiled it
 * is kept for the life of the process.
 */
export class LazyValidator<T extends TSchema> {
  private compiled: Compiled<T> | undefined;

  constructor(readonly schema: T) {}

  get validator(): Compiled<T> {
    this.compiled ??= Compile<T>(this.schema);
    return this.compiled;
  }

  Check(value: unknown): value is Static<T> {
    return this.validator.Check(value);
  }

  Errors(value: unknown): ReturnType<Compiled<T>['Errors']> {
    return this.validator.Errors(value);
  }
}

export function compileLazily<T extends TSchema>(schema: T): LazyValidator<T> {
  return new LazyValidator(schema);
}
