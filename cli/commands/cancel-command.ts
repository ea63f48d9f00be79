import type { CliIo } from '../../present/terminal/cli-io.js';
import { serverConnection, submitterClient } from '../../client/server-connection.js';

/** `fluksio cancel RUN`: a queued run ends at once; a running one is stopped at its next heartbeat. */
export async function cancelCommand(
  runId: string,
  options: { url?: string; json?: boolean },
  io: CliIo,
): Promise<number> {
  const connection = serverConnection(options.url, io.env);
  const report = await submitterClient(connection).cancelRun(runId);
  if (options.json) io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else
    io.stdout.write(
      `${report.run.id}: ${report.run.status}${report.run.reason ? ` (${report.run.reason})` : ''}\n`,
    );
  return 0;
}
