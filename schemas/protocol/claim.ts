import { z } from 'zod';
import { CommitSha } from './commit-sha.js';
import { LeaseId } from './lease-id.js';
import { RepositoryName } from './repository-name.js';
import { ParamValue } from '../key-inputs.js';
import { TrustDomain } from '../cache-entry.js';

/** `POST /api/v1/runner/claim`: wait up to this long for a run. */
export const ClaimRequest = z.strictObject({
  waitSeconds: z.number().int().min(0).max(60).default(30),
  /** Started with --accept-forks: offer it fork pull requests' runs too. */
  acceptForks: z.boolean().default(false),
});
export type ClaimRequest = z.infer<typeof ClaimRequest>;

/**
 * A claimed run (200): everything a runner needs to fetch exactly that commit and run
 * the pipeline there, and the lease every later write must carry. Git credentials, when
 * the repository needs them, come only here, as a header for git's environment.
 */
export const Claim = z.strictObject({
  run: z.strictObject({
    id: z.string(),
    attempt: z.number().int().positive(),
    params: z.record(z.string(), ParamValue),
    pipelinePath: z.string(),
    noCache: z.boolean(),
    trustDomain: TrustDomain,
    labels: z.array(z.string()),
    /** The run's whole time limit, counted from its start. */
    timeoutMs: z.number().int().positive(),
  }),
  repo: z.strictObject({
    repository: RepositoryName,
    cloneUrl: z.string(),
    /** A ref to fetch when the commit is not on a branch (a fork's `refs/pull/<n>/head`). */
    fetchRef: z.string().nullable(),
    /** True for a fork's pull request: runners refuse these unless started with --accept-forks. */
    fork: z.boolean(),
  }),
  commit: CommitSha,
  lease: LeaseId,
  git: z.strictObject({
    /** `http.extraHeader` value for the fetch (an installation token), or null. */
    extraHeader: z.string().nullable(),
  }),
  /** How often the runner must heartbeat to keep its lease. */
  heartbeatIntervalMs: z.number().int().positive(),
});
export type Claim = z.infer<typeof Claim>;
