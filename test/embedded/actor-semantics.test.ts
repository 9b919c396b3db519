import { actorSemantics } from '../support/actor-semantics.js';
import { embeddedEnvironment } from '../support/platforms.js';

describe('actor runtime, embedded (one process, in-process bus, SQLite)', () => {
  actorSemantics(() => embeddedEnvironment());
});
