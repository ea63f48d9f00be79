#!/usr/bin/env node
// The entry point: the CLI bundled by `npm run build` (which `npm ci` runs through `prepare`).
import { main } from '../build/bundle/main.mjs';

process.exitCode = await main(process.argv.slice(2));
