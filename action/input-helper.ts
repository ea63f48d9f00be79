import { z } from 'zod';
import { parseAssignmentText, type ParamAssignment } from '../core/params/param-assignments.js';
import type { ServerConnection } from '../client/server-connection.js';
import { urlWithoutUserinfo } from './url-without-userinfo.js';
import { readWorkflowContext, type WorkflowContext } from './workflow-context.js';

/**
 * Everything the action was asked to do: its inputs, as `action.yml` declares them, and
 * the workflow run it is part of. Read once, in main, by `getInputs`.
 */
export interface ActionInputs {
  /**
   * `params`: `key=value` assignments in the grammar of DESIGN §4 (`lr=0.1,0.01 seed=1`
   * is a sweep of two runs). Parsed here; typed against the pipeline once it is read.
   * @defaultValue none: the pipeline's defaults
   */
  params: ParamAssignment[];
  /**
   * `pipeline`: the pipeline file, relative to the workspace; null finds it as `fluksio run`
   * does (a DVC project is adopted unchanged).
   * @defaultValue null: `fluksio.yml`, or `dvc.yaml` where there is no fluksio.yml
   */
  pipeline: string | null;
  /** `no-cache`: run every stage (results are still cached). @defaultValue false */
  noCache: boolean;
  /**
   * `server` and `server-token`: the control plane to submit the runs to, and an API
   * token that may submit them. Null runs the pipeline in this job (local mode). A user
   * name and password in the URL are dropped: the control plane authenticates the token
   * (fetch refuses a URL that carries them), and the URL is printed in the log.
   * @defaultValue null
   */
  server: ServerConnection | null;
  /** `wait`: follow submitted runs to their end; false returns their ids at once. @defaultValue true */
  wait: boolean;
  /** `github-token`: creates the check runs; empty creates none. @defaultValue `${{ github.token }}` */
  githubToken: string;
  /** `check-name`: the check run's name; a sweep's runs add their params, `fluksio (lr=0.1)`. @defaultValue 'fluksio' */
  checkName: string;
  /** The workflow run this step is part of. */
  workflow: WorkflowContext;
}

/** The defaults of action.yml, for inputs the runner did not set (a step run by hand, tests). */
const DEFAULTS = {
  params: '',
  pipeline: '',
  'no-cache': 'false',
  server: '',
  'server-token': '',
  wait: 'true',
  'github-token': '',
  'check-name': 'fluksio',
} as const;
type InputName = keyof typeof DEFAULTS;

/** YAML 1.2 core schema booleans, exactly as `core.getBooleanInput` accepts them. */
const BooleanInput = z.string().transform((text, context) => {
  if (['true', 'True', 'TRUE'].includes(text)) return true;
  if (['false', 'False', 'FALSE'].includes(text)) return false;
  context.addIssue({ code: 'custom', message: `"${text}" is not a boolean (true or false)` });
  return z.NEVER;
});

const RawInputs = z.object({
  params: z.string(),
  pipeline: z.string(),
  'no-cache': BooleanInput,
  server: z.string().refine((text) => text === '' || isHttpUrl(text), {
    error: (issue) =>
      `"${urlWithoutUserinfo(String(issue.input))}" is not an http:// or https:// URL (e.g. https://fluksio.example.com)`,
  }),
  'server-token': z.string(),
  wait: BooleanInput,
  'github-token': z.string(),
  'check-name': z
    .string()
    .min(1, { error: 'empty; expected a name for the check run, e.g. fluksio' })
    .max(80, { error: 'longer than 80 characters; expected a short name for the check run' }),
});

/**
 * Reads every input from `env` (`INPUT_<NAME>`, as the runner passes them; process.env at
 * the edge) into ActionInputs. Every problem is reported at once, each a sentence
 * naming its input (`Input 'params': Parameter 'lr': …`); nothing has happened yet when
 * this throws.
 */
export function getInputs(env: Readonly<Record<string, string | undefined>> = process.env): ActionInputs {
  const raw = Object.fromEntries(
    (Object.keys(DEFAULTS) as InputName[]).map((name) => [name, readInput(env, name)]),
  );
  const parsed = RawInputs.safeParse(raw);
  const problems: string[] = [];
  if (!parsed.success) {
    for (const issue of parsed.error.issues)
      problems.push(`Input '${String(issue.path[0])}': ${issue.message}`);
  }
  const assignments = parseAssignmentText(raw.params ?? '');
  for (const problem of assignments.problems) problems.push(`Input 'params': ${problem.message}`);
  if (raw.server && !raw['server-token']) {
    problems.push(
      "Input 'server-token': empty, but 'server' is set; expected an API token that may submit runs (fluksio token add --submit)",
    );
  }
  if (!parsed.success || problems.length > 0) throw new Error(problems.join('\n'));
  const inputs = parsed.data;
  return {
    params: assignments.assignments,
    pipeline: inputs.pipeline === '' ? null : inputs.pipeline,
    noCache: inputs['no-cache'],
    server: inputs.server
      ? { url: urlWithoutUserinfo(inputs.server).replace(/\/+$/, ''), token: inputs['server-token'] }
      : null,
    wait: inputs.wait,
    githubToken: inputs['github-token'],
    checkName: inputs['check-name'],
    workflow: readWorkflowContext(env),
  };
}

/** `INPUT_NO-CACHE` for `no-cache`: the runner's naming, trimmed as `core.getInput` trims. */
function readInput(env: Readonly<Record<string, string | undefined>>, name: InputName): string {
  const value = env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`];
  return value === undefined ? DEFAULTS[name] : value.trim();
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
