// The action's post step, as action.yml runs it: post.mjs holds its logic.
import { run } from './post.mjs';

await run();
