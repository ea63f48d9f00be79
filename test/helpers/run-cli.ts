import { Writable } from 'node:stream';
import { main } from '../../cli/main.js';
import type { StageUsage } from '../../schemas/stage-usage.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

class Capture extends Writable {
  text = '';
  isTTY = false;
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: () => void): void {
    this.text += chunk.toString();
    callback();
  }
}

/**
 * Runs the `fluksio` command in this process, as a user would type it, in `cwd` with
 * `env` (defaults: this process's environment without colour), capturing its output.
 */
export async function runCli(
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined>; signal?: AbortSignal },
): Promise<CliResult> {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await main(args, {
    stdout,
    stderr,
    cwd: options.cwd,
    env: { ...process.env, NO_COLOR: '1', ...options.env },
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** `fluksio run --json …`, parsed; fails the test with the output when it is not JSON. */
export async function runJson(
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined> },
): Promise<CliResult & { report: RunJson }> {
  const result = await runCli(['run', '--json', ...args], options);
  let report: RunJson;
  try {
    report = JSON.parse(result.stdout) as RunJson;
  } catch {
    throw new Error(`fluksio run printed no JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
  }
  return { ...result, report };
}

/** The parts of `fluksio run --json` the tests read. */
export interface RunJson {
  run: {
    id: string;
    commit: string | null;
    dirty: boolean;
    dirtyReasons: string[];
    codeDigest: string;
    paramsDigest: string;
    params: Record<string, unknown>;
    status: string;
    reason: string | null;
  };
  stages: {
    name: string;
    status: string;
    cacheKey: string | null;
    cachedFrom: string | null;
    reasons: string[];
    notes: string[];
    durationMs: number;
    error: string | null;
    dirtyReasons: string[];
    warnings: string[];
    usage: StageUsage | null;
  }[];
  metrics: Record<string, number>;
  baseline: { id: string; commit: string | null } | null;
  diff: { name: string; baseline: number | null; value: number | null; delta: number | null }[];
  annotations: { path: string | null; line: number | null; level: string; message: string; stage: string }[];
}

/** A stage of a report by name; fails loudly when absent. */
export function stageOf(report: RunJson, name: string): RunJson['stages'][number] {
  const stage = report.stages.find((each) => each.name === name);
  if (!stage) throw new Error(`No stage ${name} in ${JSON.stringify(report.stages.map((s) => s.name))}`);
  return stage;
}

/** Stage name → status, for asserting a whole run at once. */
export function statuses(report: RunJson): Record<string, string> {
  return Object.fromEntries(report.stages.map((stage) => [stage.name, stage.status]));
}
