import { setImmediate } from 'node:timers/promises';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { newId } from '../../core/new-id.js';
import { z } from 'zod';
import { digestOf } from '../../core/canonical-json.js';
import { SubmitRunRequest } from '../../schemas/protocol/submit-run.js';
import type { RemoteRunReport } from '../../schemas/protocol/remote-run-report.js';
import { groupRepositories } from '../../store/runs/group-repositories.js';
import { createQueuedRun } from '../../store/runs/create-queued-run.js';
import { getRunDetail, type RunDetail } from '../../store/runs/get-run-detail.js';
import { checkCloneUrl, githubCloneUrl } from '../clone-url-policy.js';
import type { ApiTokenRow } from '../../schemas/tables/api-tokens.js';
import { SubmitterRefusedError } from '../../store/runs/submitter-refused-error.js';
import { authenticateSubmitter, tokenReaches } from '../http/authenticate-submitter.js';
import { RecentSubmitters } from '../http/recent-submitters.js';
import { HttpError } from '../http/http-error.js';
import { parseInput } from '../http/parse-input.js';
import { readHeader } from '../http/read-header.js';
import { requestAuth } from '../http/request-auth.js';
import type { RouteContext } from '../route-context.js';
import { toRemoteRunReport } from '../to-remote-run-report.js';

const IdempotencyKey = z
  .string()
  .max(200, { error: 'must be at most 200 characters' })
  .regex(/^[\x21-\x7e]+$/, { error: 'must be printable ASCII without spaces' });

/** The largest submission read: a run's params are short values, a few hundred bytes as a rule. */
const SUBMIT_MAX_BYTES = 2 ** 20;

/**
 * `POST /api/v1/runs` with `Idempotency-Key`: queues one run of a pushed commit for a
 * submitter whose `submit` token reaches the repository. The key becomes the run's trigger
 * key, so a retried request gets the run the first one made (200) instead of a second run
 * (201 when new). Answers the run's RemoteRunReport.
 */
export function submitRoute(app: FastifyInstance, context: RouteContext): void {
  const submitters = new RecentSubmitters(context.db);
  const submitAuth = requestAuth((request) => submitters.guard(request));
  const options = { onRequest: submitAuth.onRequest, bodyLimit: SUBMIT_MAX_BYTES };
  /** The token as it reads now, with 401, 403 or a repository it does not reach said. */
  const tokenFor = async (request: FastifyRequest, repository: string): Promise<ApiTokenRow> => {
    const token = await authenticateSubmitter(context.db, request, 'submit');
    if (!tokenReaches(token, repository)) {
      throw new HttpError(
        403,
        `repository: API token "${token.name}" may not queue runs of ${repository}`,
        'repository',
      );
    }
    return token;
  };
  app.post('/api/v1/runs', options, async (request, reply): Promise<RemoteRunReport> => {
    const tokenHash = submitAuth.of(request);
    const key = readHeader(
      request,
      'Idempotency-Key',
      IdempotencyKey,
      'a key unique to this submission, reused only when retrying it',
    );
    const body = parseInput(SubmitRunRequest, request.body, 'body');
    let cloneUrl = githubCloneUrl(body.repository);
    if (body.cloneUrl !== undefined) {
      const accepted = checkCloneUrl(body.cloneUrl, context.settings);
      if ('problem' in accepted) throw new HttpError(400, accepted.problem, 'cloneUrl');
      if (accepted.repository !== body.repository) {
        throw new HttpError(
          400,
          `repository: "${body.repository}" is not the repository cloneUrl names; expected "${accepted.repository}"`,
          'repository',
        );
      }
      cloneUrl = accepted.cloneUrl;
    }
    // A group id is the submitter's word: one that already holds another repository's runs
    // would put this run in that repository's sweep comment and page.
    if (body.group) {
      // Read first: which repositories a group holds is for a token that reaches this one.
      await tokenFor(request, body.repository);
      const repositories = await groupRepositories({ db: context.db, groupId: body.group.id });
      if (repositories.some((repository) => repository !== body.repository)) {
        throw new HttpError(
          409,
          `group.id: "${body.group.id}" is taken by runs of another repository; choose another id`,
          'group.id',
        );
      }
    }
    const labels = [...new Set(body.labels)].sort();
    // The run and the reason it waits for (`Waiting for a runner labelled gpu`, said at once
    // rather than at the next sweep) in one statement: one commit before a runner can claim
    // it; or, offered to a claim parked in this process, leased to it by that same commit.
    const reservation = context.handoff.reserve({ labels, repository: body.repository, fork: false });
    let queued: Awaited<ReturnType<typeof createQueuedRun>> | null = null;
    try {
      queued = await createQueuedRun({
        db: context.db,
        // The token is checked by the insert itself (RecentSubmitters let it past unread).
        submitter: { tokenHash },
        onlineWindowMs: context.settings.onlineWindowMs,
        taker: reservation ? { ...reservation.taker, leaseTtlMs: context.settings.leaseTtlMs } : undefined,
        run: {
          id: newId(),
          repository: body.repository,
          pipelinePath: body.pipelinePath,
          groupId: body.group?.id ?? null,
          groupIndex: body.group?.index ?? null,
          commit: body.commit,
          params: body.params,
          paramsDigest: digestOf(body.params),
          noCache: body.noCache,
          status: 'queued',
          labels,
          triggerKey: `submit:${body.repository}:${key}`,
          cloneUrl,
          fetchRef: null,
          fork: false,
          retries: body.retries,
          timeoutMs: body.timeoutMs,
          baselineCommits: body.baselineCommits ?? null,
          branch: body.branch ?? null,
        },
      });
    } catch (error) {
      if (!(error instanceof SubmitterRefusedError)) throw error;
      // Nothing was written: the claim waits on, and the token is read to say why (401, 403).
      reservation?.complete(null);
      submitters.forget(tokenHash);
      await tokenFor(request, body.repository);
      throw new HttpError(
        503,
        'The API token changed while this run was queued; send it again',
        'Authorization',
      );
    } finally {
      // A failed insert may have committed (its answer lost): the claim checks its lease.
      if (queued) reservation?.complete(queued.created ? queued.run : null);
      else reservation?.fail();
    }
    const { run, created } = queued;
    // Handed to a claim parked here: that claim's answer goes out first, as a runner waits
    // on it to start; this answer only tells the submitter the run's id.
    if (created && run.status === 'running') await setImmediate();
    let detail: RunDetail | null;
    if (created) {
      request.log.info(
        { runId: run.id, repository: run.repository, submittedBy: run.submittedBy },
        'run queued',
      );
      if (run.status === 'queued') await context.doorbell.ring();
      // A run just made has no stages, annotations or metrics yet: the insert returned all of it.
      detail = { run, stages: [], annotations: [], series: {} };
    } else {
      detail = await getRunDetail({ db: context.db, runId: run.id });
      if (!detail) throw new Error(`Run ${run.id} vanished right after it was queued`);
    }
    reply.code(created ? 201 : 200);
    return toRemoteRunReport(detail, null);
  });
}
