// The action's main step, as action.yml runs it: main.mjs holds its logic.
import { run } from './main.mjs';

await run();
