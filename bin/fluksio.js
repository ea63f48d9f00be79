#!/usr/bin/env node
// The published entry point: the CLI compiled by `npm run build` (run by `npm ci` through `prepare`).
import { main } from '../build/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
