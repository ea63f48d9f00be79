import { randomBytes } from 'node:crypto';
import { ulid } from 'ulid';
import type { Claim } from '../../../schemas/protocol/claim.js';

/** A claim of a local repository's commit, as the control plane would hand it out (no lease yet). */
export function makeClaim(options: {
  repoDir: string;
  commit: string;
  params?: Claim['run']['params'];
  fork?: boolean;
  fetchRef?: string | null;
  pipelinePath?: string;
  noCache?: boolean;
  heartbeatIntervalMs?: number;
  extraHeader?: string | null;
}): Omit<Claim, 'lease'> & { lease: string } {
  return {
    run: {
      id: ulid(),
      attempt: 1,
      params: options.params ?? {},
      pipelinePath: options.pipelinePath ?? 'fluksio.yml',
      noCache: options.noCache ?? false,
      trustDomain: options.fork ? 'pr:7' : 'trusted',
      labels: [],
      timeoutMs: 3_600_000,
    },
    repo: {
      repository: 'local/project',
      cloneUrl: `file://${options.repoDir}`,
      fetchRef: options.fetchRef ?? null,
      fork: options.fork ?? false,
    },
    commit: options.commit,
    lease: randomBytes(32).toString('hex'),
    git: { extraHeader: options.extraHeader ?? null },
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? 500,
  };
}
