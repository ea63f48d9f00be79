import { expect } from 'vitest';
import type { RunLease } from '../../client/run-lease.js';
import type { Claim } from '../../schemas/protocol/claim.js';
import type { TestControlPlane } from './control-plane-harness.js';

/** A runner holding a claimed run: its token, the lease headers its blob requests carry, and the lease. */
export interface HeldRun {
  token: string;
  headers: Record<string, string>;
  lease: RunLease;
}

/** Registers a runner named `name` for `repository`'s owner, submits a run of `repository` and claims it. */
export async function holdClaimedRun(
  plane: TestControlPlane,
  repository: string,
  name: string,
): Promise<HeldRun> {
  const submitter = await plane.addApiToken({ repositories: [repository] });
  const runner = await plane.addRunner({ name, owner: repository.split('/')[0] });
  expect((await plane.submit(submitter, { repository })).status).toBe(201);
  const claim = (await plane.claim(runner.token)) as Claim;
  return {
    token: runner.token,
    headers: { 'x-fluksio-lease': claim.lease, 'x-fluksio-run': claim.run.id },
    lease: { runId: claim.run.id, lease: claim.lease },
  };
}
