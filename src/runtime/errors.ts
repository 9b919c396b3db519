/**
 * Errors of the actor runtime. Each has a fixed `name` and `code`; errors that cross a process
 * boundary travel as {name, code, message} and are rebuilt by name, never checked with
 * `instanceof` across the boundary before that.
 */
export class ActorRuntimeError extends Error {
  override readonly name: string = 'ActorRuntimeError';
  readonly code: string = 'ACTOR_RUNTIME';
}

/** An ask got no reply in time. The message may still be processed. */
export class AskTimeoutError extends ActorRuntimeError {
  override readonly name = 'AskTimeoutError';
  override readonly code = 'ASK_TIMEOUT';
}

/** No process can serve the address now (a pinned actor whose connection is gone, or no shard owner). */
export class ActorUnavailableError extends ActorRuntimeError {
  override readonly name = 'ActorUnavailableError';
  override readonly code = 'ACTOR_UNAVAILABLE';
  constructor(
    message: string,
    /** set where this process found a pinned actor held by no connection (the ask's own lookup) */
    readonly unpinned?: string,
  ) {
    super(message);
  }
}

/** The process asked does not own the address (any more); the sender resolves again. */
export class ActorMovedError extends ActorRuntimeError {
  override readonly name: string = 'ActorMovedError';
  override readonly code = 'ACTOR_MOVED';
}

/**
 * The process asked left the cluster (its membership lapsed) before it answered: the sender
 * resolves again, as for ActorMovedError, but the ask may have been run there (a paused process
 * reads its queued messages when it resumes, with the charger's socket still open).
 */
export class ActorLostError extends ActorMovedError {
  override readonly name = 'ActorLostError';
}

/** The database rejected a state write because a newer lease epoch has been seen. */
export class FencedError extends ActorRuntimeError {
  override readonly name = 'FencedError';
  override readonly code = 'FENCED';
}

/**
 * A pin's claim that a newer claim of the same address overtook before its fence was raised (a
 * charger's second connection, here or in another process): the newer one holds the pin, and
 * the connection behind this claim is the one replaced.
 */
export class PinSupersededError extends ActorRuntimeError {
  override readonly name = 'PinSupersededError';
  override readonly code = 'PIN_SUPERSEDED';
}

export class UnknownActorKindError extends ActorRuntimeError {
  override readonly name = 'UnknownActorKindError';
  override readonly code = 'UNKNOWN_KIND';
}

/**
 * A failure that no retry can cure (a message its kind's schema refuses, a request the handler
 * can never accept). A durable message that fails with one goes to the dead letters at once
 * instead of being retried `maxAttempts` times ("Messages" in docs/ARCHITECTURE.md). Handlers
 * throw it (or a subclass); across processes it is rebuilt by name like every runtime error.
 */
export class UnrecoverableError extends ActorRuntimeError {
  override readonly name: string = 'UnrecoverableError';
  override readonly code: string = 'UNRECOVERABLE';
}

/** A message that does not match the schema of the actor kind. */
export class InvalidMessageError extends UnrecoverableError {
  override readonly name = 'InvalidMessageError';
  override readonly code = 'INVALID_MESSAGE';
}

/** An error a handler threw, as seen by a caller in another process. */
export class RemoteActorError extends ActorRuntimeError {
  override readonly name: string = 'RemoteActorError';
  constructor(
    message: string,
    readonly remoteName: string,
    readonly remoteCode: string | undefined,
  ) {
    super(message);
  }
}

export interface SerializedError {
  name: string;
  code?: string;
  message: string;
}

export function serializeError(err: unknown): SerializedError {
  if (err instanceof Error) {
    const code = 'code' in err ? err.code : undefined;
    return { name: err.name, message: err.message, ...(typeof code === 'string' ? { code } : {}) };
  }
  return { name: 'Error', message: String(err) };
}

const byName: Record<string, new (message: string) => ActorRuntimeError> = {
  AskTimeoutError,
  ActorUnavailableError,
  ActorMovedError,
  ActorLostError,
  FencedError,
  PinSupersededError,
  UnknownActorKindError,
  InvalidMessageError,
  UnrecoverableError,
};

/** The one place a serialized error becomes an Error again. */
export function rebuildError(e: SerializedError): Error {
  const Known = byName[e.name];
  if (Known) return new Known(e.message);
  return new RemoteActorError(e.message, e.name, e.code);
}
