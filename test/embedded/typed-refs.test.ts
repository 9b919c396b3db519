import { expect } from 'chai';
import Type from '#typebox';
import { InvalidMessageError } from '../../src/runtime/errors.js';
import { defineActor, defineProtocol } from '../../src/runtime/types.js';
import { eventually } from '../support/eventually.js';
import {
  embeddedEnvironment,
  startPlatform,
  type StartedPlatform,
  type TestEnvironment,
} from '../support/platforms.js';

/*
 * A toy actor added the way docs/ARCHITECTURE.md ("How to add an actor") says: a protocol (its
 * messages and what each is answered with), an implementation, a module that registers it, and
 * callers that reach it through `ref`. The `@ts-expect-error` lines are checked by
 * `npm run typecheck`: each would compile if the reply types were lost.
 */

const ShelfMessage = Type.Union([
  Type.Object({ kind: Type.Literal('shelve'), title: Type.String() }),
  Type.Object({ kind: Type.Literal('titles') }),
]);

interface ShelfReplies {
  /** how many books the shelf holds now */
  shelve: number;
  titles: string[];
}

const shelfProtocol = defineProtocol<ShelfReplies>()({ kind: 'shelf', discriminant: 'kind', messages: ShelfMessage });

const shelfActor = defineActor(shelfProtocol, {
  placement: 'sharded',
  state: Type.Object({ titles: Type.Array(Type.String()) }),
  initialState: () => ({ titles: [] }),
  handle(ctx, msg) {
    switch (msg.kind) {
      case 'shelve': {
        const titles = [...ctx.state.titles, msg.title];
        ctx.setState({ titles });
        return titles.length;
      }
      case 'titles':
        return ctx.state.titles;
    }
  },
});

// @ts-expect-error -- a message kind without a reply ('titles') does not compile
defineProtocol<{ shelve: number }>()({ kind: 'shelf', discriminant: 'kind', messages: ShelfMessage });

describe('typed actor references (a toy actor added through the public API)', () => {
  let env: TestEnvironment;
  let p: StartedPlatform;

  before(async () => {
    env = await embeddedEnvironment();
    p = await startPlatform(env, [{ name: 'shelf', actors: [shelfActor] }]);
  });

  after(async () => {
    await p?.stop().catch(() => undefined);
    await env?.cleanup();
  });

  it('answers each message with the reply type of that message, at an address built from the kind', async () => {
    const shelf = p.platform.services.actors.ref(shelfProtocol, 'kitchen');
    expect(shelf.address).to.equal('shelf/kitchen');

    const count: number = await shelf.ask({ kind: 'shelve', title: 'Dune' });
    expect(count).to.equal(1);
    expect(await shelf.ask({ kind: 'shelve', title: 'Emma' })).to.equal(2);

    const titles: string[] = await shelf.ask({ kind: 'titles' });
    expect(titles).to.deep.equal(['Dune', 'Emma']);

    // @ts-expect-error -- 'titles' is answered with string[], not a number
    const wrong: number = await shelf.ask({ kind: 'titles' });
    expect(wrong).to.deep.equal(['Dune', 'Emma']);

    let refused: unknown;
    try {
      // @ts-expect-error -- not a message of this protocol; the runtime refuses it too
      await shelf.ask({ kind: 'burn' });
    } catch (err) {
      refused = err;
    }
    expect(refused).to.be.instanceOf(InvalidMessageError);
  });

  it('sends durably with messages typed by the protocol', async () => {
    const shelf = p.platform.services.actors.ref(shelfProtocol, 'hall');
    await shelf.sendDurable({ kind: 'shelve', title: 'Ulysses' }, { dedupeKey: 'ulysses' });
    await shelf.sendDurable({ kind: 'shelve', title: 'Ulysses' }, { dedupeKey: 'ulysses' });
    // delivered after the send resolved, once: the repeated send had the same dedupe key
    const titles = await eventually(async () => {
      const now = await shelf.ask({ kind: 'titles' });
      return now.length > 0 ? now : undefined;
    });
    expect(titles).to.deep.equal(['Ulysses']);
  });
});
