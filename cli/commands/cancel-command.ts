import { serverConnection, submitterClient } from '../../client/server-connection.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { UsageError } from '../../present/terminal/usage-error.js';
import { isFinalRunStatus } from '../../schemas/statuses.js';
import { resolveRemoteRun } from '../remote/resolve-remote-run.js';

export interface CancelCommandOptions {
  url?: string;
  json?: boolean;
  /** `--wait <seconds>`: how long to wait for the run to end (0: not at all). */
  wait: string;
}

/** How often a stopping run is read again. */
const POLL_MS = 500;

/**
 * `fluksio cancel RUN`: a queued run ends at once; a running one is stopped by its runner
 * as soon as it hears (its parked watch answers within moments; its next heartbeat at the
 * latest). Waits for the run to end (`--wait` seconds) and says how it ended, or that it
 * is still stopping. Exit 0 once the run has ended (or was already over), 1 when it is
 * still stopping after the wait.
 */
export async function cancelCommand(
  runId: string,
  options: CancelCommandOptions,
  io: CliIo,
): Promise<number> {
  const waitSeconds = Number(options.wait);
  if (!Number.isFinite(waitSeconds) || waitSeconds < 0)
    throw new UsageError(`--wait: "${options.wait}" is not a number of seconds ≥ 0 (e.g. --wait 60)`);
  const client = submitterClient(serverConnection(options.url, io.env));
  const id = await resolveRemoteRun(client, runId);
  let report = await client.cancelRun(id);
  const deadline = Date.now() + waitSeconds * 1000;
  while (!isFinalRunStatus(report.run.status) && Date.now() < deadline) {
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(POLL_MS, Math.max(0, deadline - Date.now()))),
    );
    report = await client.run(id);
  }
  const ended = isFinalRunStatus(report.run.status);
  if (options.json) io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else if (ended)
    io.stdout.write(
      `${report.run.id}: ${report.run.status}${report.run.reason ? ` (${report.run.reason})` : ''}\n`,
    );
  else
    io.stdout.write(
      `${report.run.id}: still stopping after ${waitSeconds}s (cancel requested; its runner stops it as soon as it hears, at its next heartbeat at the latest). Follow it with: fluksio show ${report.run.id} --remote\n`,
    );
  return ended ? 0 : 1;
}
