import type { DoubleAnnotation, DoubleCheckRun, DoubleCheckRunAction } from './github-double-records.js';
import {
  notFound,
  paginate,
  repositoryOf,
  unprocessable,
  type HandlerContext,
  type HandlerResult,
  type OperationHandler,
} from './github-handler.js';
import { checkSuiteId, githubTime, renderMinimalPullRequest } from './github-shapes.js';

interface CheckRunBody {
  name?: string;
  head_sha?: string;
  details_url?: string;
  external_id?: string;
  status?: DoubleCheckRun['status'];
  conclusion?: string;
  started_at?: string;
  completed_at?: string;
  output?: { title?: string; summary?: string; text?: string; annotations?: DoubleAnnotation[] };
  actions?: DoubleCheckRunAction[];
}

/**
 * What GitHub refuses beyond the schema: a completed check run without a conclusion, the
 * `stale` conclusion (only GitHub sets it), columns on a multi-line annotation, a head that is
 * not a full commit SHA.
 */
function semanticProblem(body: CheckRunBody, creating: boolean): string | undefined {
  if (creating && !/^[0-9a-f]{40}$/.test(body.head_sha ?? '')) {
    return `head_sha "${body.head_sha}" is not a full 40-character commit SHA`;
  }
  if (creating && (body.status === 'completed' || body.completed_at !== undefined) && !body.conclusion) {
    return 'conclusion is required when status is completed or completed_at is given';
  }
  if (body.conclusion === 'stale') return 'conclusion cannot be set to stale; only GitHub sets it';
  const spanning = (body.output?.annotations ?? []).findIndex(
    (annotation) =>
      annotation.start_line !== annotation.end_line &&
      (annotation.start_column !== undefined || annotation.end_column !== undefined),
  );
  if (spanning >= 0) {
    return `output.annotations[${spanning}] has start_column/end_column but spans several lines`;
  }
  return undefined;
}

/** Applies a create or update body to a check run, as GitHub merges them. */
function apply(checkRun: DoubleCheckRun, body: CheckRunBody): void {
  if (body.name !== undefined) checkRun.name = body.name;
  if (body.details_url !== undefined) checkRun.detailsUrl = body.details_url;
  if (body.external_id !== undefined) checkRun.externalId = body.external_id;
  if (body.started_at !== undefined) checkRun.startedAt = body.started_at;
  if (body.status !== undefined) {
    checkRun.status = body.status;
    if (body.status !== 'completed') checkRun.conclusion = null;
  }
  if (body.conclusion !== undefined) {
    checkRun.conclusion = body.conclusion;
    checkRun.status = 'completed';
  }
  if (body.completed_at !== undefined) checkRun.completedAt = body.completed_at;
  if (checkRun.status === 'completed') checkRun.completedAt ??= githubTime(new Date());
  if (body.output) {
    for (const field of ['title', 'summary', 'text'] as const) {
      const value = body.output[field];
      if (value !== undefined) checkRun.output[field] = value;
    }
    // "Each time you update the check run, annotations are appended."
    checkRun.annotations.push(...(body.output.annotations ?? []));
  }
  if (body.actions !== undefined) checkRun.actions = body.actions;
}

function renderCheckRun(context: HandlerContext, checkRun: DoubleCheckRun): unknown {
  const repository = repositoryOf(context);
  const example = context.route.example() as Record<string, unknown>;
  const checkRunExample = (Array.isArray(example.check_runs) ? example.check_runs[0] : example) as Record<
    string,
    unknown
  >;
  const apiUrl = `https://api.github.com/repos/${repository.fullName}`;
  // GitHub lists only pull requests whose head is in the same repository, never forks'.
  const sameRepositoryPullRequests = context.state
    .pullRequestsWithHead(repository, checkRun.headSha)
    .filter(
      (pullRequest) => pullRequest.head.repoId === undefined || pullRequest.head.repoId === repository.id,
    );
  return {
    ...checkRunExample,
    id: checkRun.id,
    node_id: `CR_${checkRun.id}`,
    name: checkRun.name,
    head_sha: checkRun.headSha,
    external_id: checkRun.externalId,
    url: `${apiUrl}/check-runs/${checkRun.id}`,
    html_url: `https://github.com/${repository.fullName}/runs/${checkRun.id}`,
    details_url: checkRun.detailsUrl ?? `https://github.com/apps/${context.app.slug}`,
    status: checkRun.status,
    conclusion: checkRun.conclusion,
    started_at: checkRun.startedAt,
    completed_at: checkRun.completedAt,
    output: {
      ...checkRun.output,
      annotations_count: checkRun.annotations.length,
      annotations_url: `${apiUrl}/check-runs/${checkRun.id}/annotations`,
    },
    check_suite: { id: checkSuiteId(checkRun.headSha) },
    app: {
      ...(checkRunExample.app as Record<string, unknown>),
      id: context.app.id,
      slug: context.app.slug,
      name: context.app.name,
    },
    pull_requests: sameRepositoryPullRequests.map((pullRequest) =>
      renderMinimalPullRequest(pullRequest, repository),
    ),
  };
}

const createCheckRun: OperationHandler = (context) => {
  const body = context.body as CheckRunBody;
  const problem = semanticProblem(body, true);
  if (problem) return unprocessable(problem);
  const checkRun: DoubleCheckRun = {
    id: context.state.nextId('checkRun'),
    repository: repositoryOf(context).fullName,
    name: String(body.name),
    headSha: String(body.head_sha),
    externalId: null,
    status: 'queued',
    conclusion: null,
    startedAt: githubTime(new Date()),
    completedAt: null,
    detailsUrl: null,
    output: { title: null, summary: null, text: null },
    annotations: [],
    actions: [],
    history: [{ method: 'POST', body: structuredClone(context.body), at: new Date() }],
  };
  apply(checkRun, body);
  context.state.saveCheckRun(checkRun);
  return { status: 201, body: renderCheckRun(context, checkRun) };
};

function withCheckRun(
  context: HandlerContext,
  then: (checkRun: DoubleCheckRun) => HandlerResult,
): HandlerResult {
  const checkRun = context.state.checkRun(repositoryOf(context), Number(context.params.check_run_id));
  return checkRun ? then(checkRun) : notFound();
}

const updateCheckRun: OperationHandler = (context) =>
  withCheckRun(context, (checkRun) => {
    const body = context.body as CheckRunBody;
    const problem = semanticProblem(body, false);
    if (problem) return unprocessable(problem);
    checkRun.history.push({ method: 'PATCH', body: structuredClone(context.body), at: new Date() });
    apply(checkRun, body);
    return { status: 200, body: renderCheckRun(context, checkRun) };
  });

const getCheckRun: OperationHandler = (context) =>
  withCheckRun(context, (checkRun) => ({ status: 200, body: renderCheckRun(context, checkRun) }));

const listAnnotations: OperationHandler = (context) =>
  withCheckRun(context, (checkRun) => {
    const [template = {}] = context.route.example() as Array<Record<string, unknown>>;
    const page = paginate(context, checkRun.annotations);
    const blobHref = `https://github.com/${checkRun.repository}/blob/${checkRun.headSha}`;
    return {
      status: 200,
      headers: page.headers,
      body: page.items.map((annotation) => ({
        ...template,
        path: annotation.path,
        start_line: annotation.start_line,
        end_line: annotation.end_line,
        start_column: annotation.start_column ?? null,
        end_column: annotation.end_column ?? null,
        annotation_level: annotation.annotation_level,
        title: annotation.title ?? null,
        message: annotation.message,
        raw_details: annotation.raw_details ?? null,
        blob_href: `${blobHref}/${annotation.path}`,
      })),
    };
  });

/** Check runs on a ref, filtered as GitHub does: `filter=latest` keeps the newest per name. */
const listCheckRunsForRef: OperationHandler = (context) => {
  const repository = repositoryOf(context);
  const ref = String(context.params.ref);
  const sha = context.state.history(repository, ref)?.[0]?.sha ?? ref;
  const { check_name: checkName, status, filter = 'latest', app_id: appId } = context.query;
  const newestFirst = context.state
    .checkRuns(repository)
    .filter(
      (checkRun) =>
        checkRun.headSha === sha &&
        (checkName === undefined || checkRun.name === checkName) &&
        (status === undefined || checkRun.status === status) &&
        (appId === undefined || appId === context.app.id),
    )
    .sort((a, b) => b.id - a.id);
  const selected =
    filter === 'all'
      ? newestFirst
      : newestFirst.filter(
          (checkRun, index) => newestFirst.findIndex((other) => other.name === checkRun.name) === index,
        );
  const page = paginate(context, selected);
  return {
    status: 200,
    headers: page.headers,
    body: {
      total_count: selected.length,
      check_runs: page.items.map((checkRun) => renderCheckRun(context, checkRun)),
    },
  };
};

/** Check runs: create, update, read, list, annotations. */
export const checkRunHandlers: Record<string, OperationHandler> = {
  'checks/create': createCheckRun,
  'checks/update': updateCheckRun,
  'checks/get': getCheckRun,
  'checks/list-annotations': listAnnotations,
  'checks/list-for-ref': listCheckRunsForRef,
};
