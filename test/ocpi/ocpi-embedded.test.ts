import { commandsSuite } from './suites/commands.js';
import { embeddedTarget } from '../support/ocpi-harness.js';
import { authAndErrorsSuite } from './suites/auth-and-errors.js';
import { cpoAndListsSuite } from './suites/cpo-and-lists.js';
import { credentialsSuite } from './suites/credentials.js';
import { emspSuite } from './suites/emsp.js';
import { managementSuite } from './suites/management.js';
import { modulesSuite } from './suites/modules.js';
import { overviewSuite } from './suites/overview.js';
import { platformsSuite } from './suites/platforms.js';
import { exchangeSuite } from './suites/exchange.js';

describe('OCPI, embedded mode (one process, SQLite; partners on loopback)', () => {
  const target = () => embeddedTarget();
  authAndErrorsSuite(target);
  credentialsSuite(target);
  emspSuite(target);
  cpoAndListsSuite(target);
  overviewSuite(target);
  managementSuite(target);
  modulesSuite(target);
  commandsSuite(target);
  platformsSuite(target);
  exchangeSuite(target);
});
