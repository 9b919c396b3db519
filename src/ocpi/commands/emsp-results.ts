import Type from '#typebox';
import { route } from '../../gateway/route-table.js';
import type { OcpiContext } from '../core/context.js';
import type { OcpiVersion } from '../core/envelope.js';
import { noResultExpected, unknownObject } from '../core/errors.js';
import { requireLink } from '../core/guards.js';
import type { OcpiRoute } from '../core/mount-kit.js';
import { ObjectId } from '../core/schemas.js';
import { CommandResponse211, CommandResult221 } from './schemas.js';

/**
 * The eMSP side of the commands module: the results partner CPOs POST to the `response_url` of a
 * command we sent them (`/commands/{command}/{uid}` on the eMSP mount of the command's version).
 * The result is kept on the command, which the operator reads at `GET /v1/commands/{uid}`.
 * A result for a command we did not send that CPO, or POSTed to the mount of the version the
 * command was not sent in, is 404; a second result replaces the first
 * (a CPO may report ACCEPTED, then the outcome; docs/OCPI.md, Decisions 26). A result for a
 * command the CPO answered other than ACCEPTED is 409: none follows such an answer (mod_commands).
 */

const ResultPath = Type.Object({ command: Type.String({ minLength: 1, maxLength: 32 }), uid: ObjectId });

/** POST `/commands/{command}/{uid}` of `version`: the result of a command we sent. */
export function commandResultsReceiver(ctx: OcpiContext, version: OcpiVersion): OcpiRoute {
  return route({
    method: 'POST',
    path: '/commands/:command/:uid',
    module: 'commands',
    summary: "The result of a command we sent the caller (the command's response_url)",
    params: ResultPath,
    body: version === '2.2.1' ? CommandResult221 : CommandResponse211,
    responses: {
      404: 'no such command sent to the caller',
      409: 'the command was answered other than ACCEPTED: no result follows',
    },
    handler: async (req) => {
      const caller = requireLink(req.auth, version);
      const key = { ...ctx.ownParty(), id: req.params.uid };
      const now = new Date().toISOString();
      const result = req.body;
      const updated = await ctx.stores.commands.update(key, (sent) => {
        // only the partner the command was sent to, whichever of its parties it acts as
        const theirs = sent.partner.id === caller.partnerId;
        // its response_url is on the mount of the version it was sent in; the other one knows it not
        if (!theirs || sent.command !== req.params.command || sent.version !== version) throw unknownObject('command');
        // a result follows only a command the CPO ACCEPTED; its answer may not have reached us yet
        const answered = sent.response?.['result'];
        if (typeof answered === 'string' && answered !== 'ACCEPTED') throw noResultExpected(answered);
        return { ...sent, result, result_at: now, last_updated: now };
      });
      if (!updated) throw unknownObject('command');
      req.log.info({ command: updated.command, uid: updated.uid, result: result.result }, 'command result received');
      return { data: undefined };
    },
  });
}
