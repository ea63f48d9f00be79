/**
 * `fluksio runner` as its own process, for tests, until cli/main.ts wires the command:
 * argv[2] is the command's options as JSON; SIGTERM and SIGINT stop it as main's do.
 */
import { processIo } from '../../../present/terminal/cli-io.js';
import { runnerCommand } from '../../../cli/commands/runner-command.js';
import { UsageError } from '../../../present/terminal/usage-error.js';

const controller = new AbortController();
process.on('SIGTERM', () => controller.abort());
process.on('SIGINT', () => controller.abort());
runnerCommand(JSON.parse(process.argv[2] ?? '{}'), processIo({ signal: controller.signal })).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`fluksio: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(error instanceof UsageError ? 2 : 1);
  },
);
