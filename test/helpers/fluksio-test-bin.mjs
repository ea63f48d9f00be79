// The `fluksio` command bundled from the sources by the test global setup, as a process.
import { main } from '../../build/test/main.mjs';

process.exitCode = await main(process.argv.slice(2));
