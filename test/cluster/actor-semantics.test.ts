import { actorSemantics } from '../support/actor-semantics.js';
import { clusterEnvironment } from '../support/platforms.js';

describe('actor runtime, cluster mode in one process (Redis, PostgreSQL)', () => {
  actorSemantics(() => clusterEnvironment());
});
