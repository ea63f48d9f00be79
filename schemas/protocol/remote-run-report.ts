import { z } from 'zod';
import { RunReport } from '../run-report.js';

/**
 * `GET /api/v1/runs/:id`: what `fluksio run --json` prints, plus where the run is in
 * its life: its attempt, the runner that holds or held it, whether that runner
 * sandboxed its stages, and its labels.
 */
export const RemoteRunReport = RunReport.extend({
  repository: z.string(),
  attempt: z.number().int().positive(),
  labels: z.array(z.string()),
  runner: z.string().nullable(),
  /**
   * How the runner isolated the stages (`bubblewrap 0.8.0: …`); null when unsandboxed or
   * not started. Defaulted: a control plane from before sandboxes does not send it.
   */
  sandbox: z.string().nullable().default(null),
});
export type RemoteRunReport = z.infer<typeof RemoteRunReport>;
