import { readControlPlaneSettings } from '../../app/control-plane-settings.js';
import { CONTROL_PLANE_ROLES, parseControlPlaneRole } from '../../app/control-plane-role.js';
import { InvalidSettingsError } from '../../app/invalid-settings-error.js';
import { startControlPlane } from '../../app/start-control-plane.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { UsageError } from '../../present/terminal/usage-error.js';

/**
 * `fluksio app [--role web|worker|all]`: the control plane (the runner API, the submit API,
 * the webhook intake; the delivery worker, the outbox, the sweeper), or one half of it.
 * Settings come from the environment once, here; it runs until SIGTERM or SIGINT, then closes in
 * order (HTTP, sweeper, Redis, database).
 */
export async function appCommand(options: { role?: string }, io: CliIo): Promise<number> {
  const role = parseControlPlaneRole(options.role ?? 'all');
  if (role === null) {
    throw new UsageError(
      `--role: "${options.role}" is not a role; expected one of ${CONTROL_PLANE_ROLES.join(', ')}`,
    );
  }
  let plane;
  try {
    plane = await startControlPlane({ settings: readControlPlaneSettings(io.env), role });
  } catch (error) {
    if (error instanceof InvalidSettingsError) throw new UsageError(error.message, { cause: error });
    throw error;
  }
  io.stderr.write(`fluksio control plane (${role}) listening on ${plane.url}\n`);
  await new Promise<void>((resolve) => {
    if (!io.signal || io.signal.aborted) return resolve();
    io.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await plane.close();
  return 0;
}
