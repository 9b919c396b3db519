import { exitOnStartFailure, runProcess } from '../../src/platform/run.js';
import { platformModules } from '../../src/modules.js';
import { testActorsModule } from './test-actors.js';

/** A platform process with the product's modules plus the runtime test actors. */
runProcess([...platformModules(), testActorsModule()]).catch(exitOnStartFailure);
