import { annotationPages } from '../../../present/github/github-annotation.js';
import type { RenderedCheckRun } from '../../../present/github/render-check-run.js';
import type { OutboxOctokit } from './outbox-octokit.js';
import { repositoryParams } from './outbox-octokit.js';

/** Where a check run is, as far as the outbox knows, before a sync. */
export interface CheckRunPlace {
  /** `owner/name`. */
  repository: string;
  headSha: string;
  /** What finds the check run again when its id was never recorded: a run id or a notice id. */
  externalId: string;
  checkRunId: number | null;
  /** How many of the rendered annotations GitHub holds; null when unknown (GitHub is asked). */
  annotationsSent: number | null;
  /**
   * How many annotations GitHub held before the rendered ones (an earlier attempt's); null
   * when unknown: GitHub's count is read, and recorded, before any of them is sent.
   */
  annotationsOffset: number | null;
  detailsUrl: string | null;
  startedAt: Date | null;
  completedAt: Date | null;
}

/** What GitHub holds after a request was accepted, recorded before the next request. */
export interface CheckRunProgress {
  checkRunId: number;
  annotationsSent: number;
}

/**
 * Makes a check run on GitHub show `rendered` (DESIGN §8). With no known id, it first
 * adopts a check run of the same name on the commit whose `external_id` matches — one a
 * lost response or a crash left unrecorded — and creates one only if there is none. The
 * create or update carries the first 50 annotations not yet sent; further updates carry
 * the rest, 50 each (GitHub appends them). `record` runs after every accepted request, so
 * a retry neither creates a second check run nor appends an annotation twice. When GitHub
 * must be asked how many it holds, the annotations an earlier attempt left there (the
 * offset, learnt and recorded through `recordOffset` before any rendered one is sent) are
 * not counted as sent.
 */
export async function syncCheckRunOutput({
  octokit,
  place,
  rendered,
  record,
  recordOffset,
}: {
  octokit: OutboxOctokit;
  place: CheckRunPlace;
  rendered: RenderedCheckRun;
  record: (progress: CheckRunProgress) => Promise<void>;
  /** Records a learnt offset; needed only where `place.annotationsOffset` may be null. */
  recordOffset?: (annotationsOffset: number) => Promise<void>;
}): Promise<void> {
  const { owner, repo } = repositoryParams(place.repository);
  let { checkRunId, annotationsSent, annotationsOffset } = place;
  // GitHub's count holds the earlier annotations (`offset`) and then the rendered ones sent.
  // An unknown offset means none of the rendered ones was sent: it is recorded first.
  const learn = async (count: number): Promise<void> => {
    if (annotationsOffset === null) {
      annotationsOffset = Math.max(0, count - (annotationsSent ?? 0));
      await recordOffset?.(annotationsOffset);
    }
    annotationsSent = Math.max(0, count - annotationsOffset);
  };
  if (checkRunId === null) {
    const adopted = await findByExternalId(octokit, place, rendered.name);
    if (adopted) {
      checkRunId = adopted.id;
      await learn(adopted.annotationsCount);
      await record({ checkRunId, annotationsSent: annotationsSent ?? 0 });
    } else if (annotationsOffset === null) {
      // The check run is created below: GitHub holds nothing before the rendered ones.
      await learn(0);
    }
  }
  if (
    checkRunId !== null &&
    (annotationsSent === null || annotationsOffset === null) &&
    rendered.annotations.length > 0
  ) {
    const { data } = await octokit.request('GET /repos/{owner}/{repo}/check-runs/{check_run_id}', {
      owner,
      repo,
      check_run_id: checkRunId,
    });
    await learn(data.output.annotations_count);
  }
  let sent = annotationsSent ?? 0;
  const [first = [], ...rest] = annotationPages(rendered.annotations, sent);
  // Every request carries the whole output, so none of them leaves the text or summary behind.
  const output = {
    title: rendered.title,
    summary: rendered.summary,
    ...(rendered.text ? { text: rendered.text } : {}),
  };

  const fields = {
    name: rendered.name,
    external_id: place.externalId,
    ...(place.detailsUrl === null ? {} : { details_url: place.detailsUrl }),
    ...(place.startedAt === null ? {} : { started_at: place.startedAt.toISOString() }),
    ...statusFields(rendered, place.completedAt),
    output: { ...output, annotations: first },
    actions: rendered.actions,
  };
  let id: number;
  if (checkRunId === null) {
    const { data } = await octokit.request('POST /repos/{owner}/{repo}/check-runs', {
      owner,
      repo,
      head_sha: place.headSha,
      ...fields,
    });
    id = Number(data.id);
  } else {
    id = checkRunId;
    await octokit.request('PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}', {
      owner,
      repo,
      check_run_id: id,
      ...fields,
    });
  }
  sent += first.length;
  await record({ checkRunId: id, annotationsSent: sent });

  for (const page of rest) {
    await octokit.request('PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}', {
      owner,
      repo,
      check_run_id: id,
      output: { ...output, annotations: page },
    });
    sent += page.length;
    await record({ checkRunId: id, annotationsSent: sent });
  }
}

/** `status` with, once completed, the conclusion and when (GitHub rejects a conclusion before). */
function statusFields(rendered: RenderedCheckRun, completedAt: Date | null) {
  if (rendered.status !== 'completed' || rendered.conclusion === null) return { status: rendered.status };
  return {
    status: 'completed' as const,
    conclusion: rendered.conclusion,
    ...(completedAt === null ? {} : { completed_at: completedAt.toISOString() }),
  };
}

/**
 * The check run named `name` on the commit whose `external_id` is ours. Every check run of
 * the name is listed (`filter: all`), not only the latest: a re-run of the same commit has
 * the same name, and its check run must not hide this one.
 */
async function findByExternalId(
  octokit: OutboxOctokit,
  place: CheckRunPlace,
  name: string,
): Promise<{ id: number; annotationsCount: number } | null> {
  const { owner, repo } = repositoryParams(place.repository);
  for (let page = 1; ; page += 1) {
    const { data } = await octokit.request('GET /repos/{owner}/{repo}/commits/{ref}/check-runs', {
      owner,
      repo,
      ref: place.headSha,
      check_name: name,
      filter: 'all',
      per_page: 100,
      page,
    });
    const found = data.check_runs.find((checkRun) => checkRun.external_id === place.externalId);
    if (found) return { id: Number(found.id), annotationsCount: found.output.annotations_count };
    if (data.check_runs.length < 100) return null;
  }
}
