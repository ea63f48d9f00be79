#!/usr/bin/env -S node --
// The entry point: the CLI bundled by `npm run build` (which `npm ci` runs through `prepare`).
// `--` ends Node's own options: Node 20 otherwise reads `--env-file` anywhere in its argv,
// fluksio's arguments included, so `fluksio runner --env-file secrets.env` would load the
// runner's secrets (NODE_OPTIONS among them) into this process, or end it at once with
// Node's "not found" when the file is missing. `env -S` (coreutils ≥ 8.30, macOS) splits the
// line; npm's Windows shims read it too.
import { main } from '../build/bundle/main.mjs';

process.exitCode = await main(process.argv.slice(2));
