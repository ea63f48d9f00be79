/**
 * What one `fluksio app` process does (`--role`): `web` answers HTTP (the runner and submit
 * APIs, the GitHub webhook intake, health); `worker` processes webhook deliveries, sends
 * the GitHub outbox and sweeps runs, answering only health and metrics over HTTP; `all`
 * does both. Split, a webhook's answer no longer shares an event loop with the outbox.
 */
export type ControlPlaneRole = 'web' | 'worker' | 'all';

export const CONTROL_PLANE_ROLES: readonly ControlPlaneRole[] = ['web', 'worker', 'all'];

/** The role `value` names, or null when it names none. */
export function parseControlPlaneRole(value: string): ControlPlaneRole | null {
  return (CONTROL_PLANE_ROLES as readonly string[]).includes(value) ? (value as ControlPlaneRole) : null;
}

/** Whether the role answers the APIs and takes webhooks. */
export const servesApi = (role: ControlPlaneRole): boolean => role !== 'worker';

/** Whether the role runs the background work: deliveries, the outbox, the sweeper. */
export const runsWorkers = (role: ControlPlaneRole): boolean => role !== 'web';
