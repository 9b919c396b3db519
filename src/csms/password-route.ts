import Type, { type Static } from '#typebox';
import type { OperatorAuth } from '../gateway/csms-auth.js';
import { HttpError } from '../gateway/errors.js';
import { route, type RouteResult, type RouteSpec } from '../gateway/route-table.js';
import { passwordRuleBreach } from '../ocpp/basic-auth-password.js';
import type { ProtocolName } from '../ocpp/domain.js';
import type { ChargePointStore } from './charge-point-store.js';
import { hashIdentityKey, newIdentityKey } from './identity-key.js';
import { awaitOutcome, DEFAULT_WAIT_MS, OperationResult, Wait, type OperationAccess } from './operations.js';
import { ChargePointId } from './views.js';

/**
 * PUT /v1/charge-points/{id}/password: set or rotate a charger's HTTP Basic password
 * (docs/CSMS.md "Passwords"). A connected charger is sent the new password first (the
 * `set-password` command: 1.6 ChangeConfiguration AuthorizationKey, 2.0.1 SetVariables
 * SecurityCtrlr.BasicAuthPassword) and the stored one changes once it accepted; until its answer
 * both passwords let it in. `force` stores it at once and sends nothing.
 */

export interface PasswordAccess extends OperationAccess {
  online(id: string): Promise<boolean>;
  chargePoints: ChargePointStore;
}

const SetPasswordBody = Type.Object(
  {
    password: Type.Optional(
      Type.String({
        maxLength: 200,
        description:
          'the new password: 16-40 characters of a-z A-Z 0-9 * - _ = : + | @ . (OCPP passwordString), at most 20 for an OCPP 1.6 charger; absent: a generated one',
      }),
    ),
    generate: Type.Optional(Type.Boolean({ description: 'generate the new password (what an empty body does)' })),
    force: Type.Optional(
      Type.Boolean({
        description:
          'store the new password at once and send the charger nothing (a charger set up by hand); without it an offline charger answers 409',
      }),
    ),
  },
  { additionalProperties: false },
);

const PasswordResult = Type.Object({
  result: OperationResult.properties.result,
  command_id: Type.Union([Type.String(), Type.Null()], { description: 'the set-password command; null with force' }),
  command_status: OperationResult.properties.command_status,
  answered: OperationResult.properties.answered,
  detail: OperationResult.properties.detail,
  password_state: Type.Union([Type.Literal('active'), Type.Literal('pending'), Type.Literal('discarded')], {
    description:
      'active: it is the charger password now; pending: sent, its outcome unknown, the old and the new password both let the charger in; discarded: the charger refused it (or it was replaced), the old one stays',
  }),
  password: Type.Optional(Type.String({ description: 'the generated password, shown only here' })),
});

type PasswordBody = Static<typeof SetPasswordBody>;
type PasswordAnswer = Static<typeof PasswordResult>;

/** The new password from the body: the operator's, checked against the rule of the charger's version, or a generated one. */
function newPassword(body: PasswordBody, protocol: ProtocolName): { password: string; generated: boolean } {
  if (body.password !== undefined && body.generate === true)
    throw new HttpError(422, 'password_or_generate', 'give a password or generate: true, not both');
  if (body.password === undefined && body.generate === false)
    throw new HttpError(422, 'password_missing', 'give a password, or generate: true (or an empty body)');
  const password = body.password ?? newIdentityKey();
  const breach = passwordRuleBreach(password, protocol);
  if (breach) throw new HttpError(422, 'password_rule', breach);
  return { password, generated: body.password === undefined };
}

/** Sends the new password to the connected charger; the stored one changes with its answer. */
async function pushPassword(access: PasswordAccess, id: string, password: string, waitMs: number) {
  const hash = hashIdentityKey(password);
  // one change at a time: a second one would replace the pending password while the charger may
  // already have taken the first, and lock it out
  const before = await access.chargePoints.find(id);
  if (before?.pending_key_hash)
    throw new HttpError(
      409,
      'password_change_pending',
      `a password sent to charge point ${id} at ${new Date(before.pending_since ?? 0).toISOString()} has no outcome yet: wait for it; when its answer was lost (the charger kept its password), DELETE /v1/charge-points/${id}/password/pending drops it; force: true stores a password without sending it`,
    );
  if (!(await access.online(id)))
    throw new HttpError(
      409,
      'charge_point_offline',
      `charge point ${id} is not connected: a new password is sent to the charger first; force: true stores it without that`,
    );
  // valid for login before it is sent: a charger may take it and reconnect before its answer is in
  await access.chargePoints.setPending(id, hash);
  let sent: { command_id: string; status: string };
  try {
    sent = await access.command(id, { kind: 'set-password', password });
  } catch (err) {
    // gone offline meanwhile: nothing was queued. (After a 503 it may have been: it stays pending.)
    if (err instanceof HttpError && err.status === 409) await access.chargePoints.dropPending(id, hash);
    throw err;
  }
  const { reply: _reply, ...result } = await awaitOutcome(access, id, sent.command_id, sent.status, waitMs);
  const row = await access.chargePoints.find(id);
  const state = row?.key_hash === hash ? 'active' : row?.pending_key_hash === hash ? 'pending' : 'discarded';
  return { ...result, password_state: state } satisfies PasswordAnswer;
}

/**
 * DELETE /v1/charge-points/{id}/password/pending: the operator drops a pending password whose
 * outcome nobody will learn (the process that sent it stopped before the charger's answer, which
 * was lost): the charger keeps its password, the pending one stops letting it in, and a new
 * rotation is possible. Refused while the set-password command is still queued or sent.
 */
export function dropPendingPasswordRoute(access: PasswordAccess): RouteSpec<OperatorAuth> {
  return route({
    method: 'DELETE',
    path: '/charge-points/:id/password/pending',
    summary:
      'Drop a pending password whose outcome is unknown (its answer was lost): the charger keeps the password it has, and may be sent a new one',
    params: Type.Object({ id: ChargePointId }),
    responses: {
      404: 'unknown charge point',
      409: 'no pending password, or its set-password command is still queued or waiting for the charger',
    },
    handler: async (req): Promise<RouteResult> => {
      const id = String(req.params.id);
      const row = await access.chargePoints.find(id);
      if (!row) throw new HttpError(404, 'not_found', `no charge point ${id}`);
      if (!row.pending_key_hash)
        throw new HttpError(409, 'no_pending_password', `charge point ${id} has no pending password`);
      const state = await access.storedState(id);
      if (state?.outbound.some((c) => c.command.kind === 'set-password'))
        throw new HttpError(
          409,
          'password_change_in_flight',
          `the new password of charge point ${id} is still queued or waiting for the charger's answer: wait for it`,
        );
      await access.chargePoints.dropPending(id, row.pending_key_hash);
      return { status: 204 };
    },
  });
}

export function passwordRoute(access: PasswordAccess): RouteSpec<OperatorAuth> {
  return route({
    method: 'PUT',
    path: '/charge-points/:id/password',
    summary:
      "Set or rotate the charger's HTTP Basic password; a connected charger gets it first (1.6 ChangeConfiguration AuthorizationKey, 2.0.1 SetVariables SecurityCtrlr.BasicAuthPassword)",
    params: Type.Object({ id: ChargePointId }),
    query: Wait,
    body: SetPasswordBody,
    bodyOptional: true,
    response: PasswordResult,
    responses: {
      404: 'unknown charge point',
      409: 'charge point offline, or a password change still pending (and no force)',
      422: "a password that breaks the OCPP rule of the charger's version, or password with generate",
      503: 'the process holding the charger did not answer in time',
    },
    handler: async (req): Promise<RouteResult> => {
      const id = String(req.params.id);
      const body = req.body ?? {};
      const { password, generated } = newPassword(body, await access.protocolOf(id));
      const shown = generated ? { password } : {};
      if (body.force === true) {
        await access.chargePoints.setPassword(id, hashIdentityKey(password));
        const stored: PasswordAnswer = {
          result: 'ACCEPTED',
          command_id: null,
          command_status: 'stored',
          answered: true,
          detail: 'stored at once; the charger was sent nothing',
          password_state: 'active',
        };
        return { data: { ...stored, ...shown } };
      }
      const pushed = await pushPassword(access, id, password, req.query.wait_ms ?? DEFAULT_WAIT_MS);
      return { data: { ...pushed, ...shown } };
    },
  });
}
