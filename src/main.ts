import { platformModules } from './modules.js';
import { exitOnStartFailure, runProcess } from './platform/run.js';

/** Entry point of every process (Procfile web/worker, `npm start`). */
runProcess(platformModules()).catch(exitOnStartFailure);
