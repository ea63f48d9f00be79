import { readControlPlaneSettings } from '../../app/control-plane-settings.js';
import { InvalidSettingsError } from '../../app/invalid-settings-error.js';
import { startControlPlane } from '../../app/start-control-plane.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { UsageError } from '../../present/terminal/usage-error.js';

/**
 * `fluksio app`: the control plane (the runner API, the submit API, the sweeper). Settings
 * come from the environment once, here; it runs until SIGTERM or SIGINT, then closes in
 * order (HTTP, sweeper, Redis, database).
 */
export async function appCommand(io: CliIo): Promise<number> {
  let settings;
  try {
    settings = readControlPlaneSettings(io.env);
  } catch (error) {
    if (error instanceof InvalidSettingsError) throw new UsageError(error.message, { cause: error });
    throw error;
  }
  const plane = await startControlPlane({ settings });
  io.stderr.write(`fluksio control plane listening on ${plane.url}\n`);
  await new Promise<void>((resolve) => {
    if (!io.signal || io.signal.aborted) return resolve();
    io.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await plane.close();
  return 0;
}
