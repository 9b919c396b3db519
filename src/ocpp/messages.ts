import type { Ocpp16Messages } from './generated/ocpp16.js';
import type { Ocpp201Messages } from './generated/ocpp201.js';

/**
 * The payload types generated from the official schemas (src/ocpp/generated, by
 * scripts/generate-ocpp-types.ts), keyed by the WebSocket subprotocol names of domain.ts.
 */
export interface OcppMessages {
  'ocpp1.6': Ocpp16Messages;
  'ocpp2.0.1': Ocpp201Messages;
}

export type OcppVersionName = keyof OcppMessages;

/** Any version's action -> payloads map. */
export type MessageMap = Record<string, { request: object; response: object }>;

/**
 * A call of one version as a union discriminated by `action`: a `switch (call.action)` narrows
 * `call.payload` to that action's request type.
 */
export type CallOf<M extends MessageMap> = {
  [A in keyof M & string]: { action: A; payload: M[A]['request'] };
}[keyof M & string];
export type ResponseOf<M extends MessageMap> = M[keyof M & string]['response'];

/*
 * Distributive over the version, so that the union of both versions' adapters (or connections)
 * is one of the adapter (connection) for the union of versions.
 */
export type OcppCall<V extends OcppVersionName> = V extends OcppVersionName ? CallOf<OcppMessages[V]> : never;
/** Any response payload of the version (the adapters check each reply against its action's type with `satisfies`). */
export type OcppResponse<V extends OcppVersionName> = V extends OcppVersionName ? ResponseOf<OcppMessages[V]> : never;
