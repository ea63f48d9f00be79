import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type postgres from 'postgres';
import { exited } from './fluksio-command.js';
import type { CommitReference } from './durable-commit.js';

/** A runner client that parks one claim at a time and says when its answer arrived. */
export interface ClaimingRunner {
  /**
   * Sends a claim at once; resolves with when its answer arrived (ms since the epoch, as
   * `performance.timeOrigin + performance.now()`) and the run it got, and `finished` once
   * that run is finished.
   */
  claim(): Promise<{ at: number; runId: string | null; finished: Promise<void> }>;
}

/** Submit → claim samples, each beside one durable commit timed just before it. */
export interface SubmitToClaim {
  /** Submit sent → the parked claim's answer arrived at the runner, ms. */
  latencies: number[];
  /** The run's `queued_at` (the insert's transaction) → the claim's answer arrived, ms. */
  queuedToClaimed: number[];
  /** One durable commit, timed before each sample so that it shares the samples' load. */
  commits: number[];
}

const here = fileURLToPath(new URL('.', import.meta.url));

/**
 * A runner client in a process of its own (parked-runner.ts), as runners are deployed; or
 * another script speaking its protocol on stdin and stdout (`script`, with its arguments).
 */
export function runnerProcess(
  url: string,
  token: string,
  script: readonly string[] = ['parked-runner.ts'],
): ClaimingRunner & { close(): Promise<void> } {
  const [file, ...args] = script;
  // With this process's own loader flags (tsx's), so the child runs TypeScript as this does.
  const child = spawn(process.execPath, [...process.execArgv, join(here, file ?? ''), ...args], {
    env: { PATH: process.env.PATH, FLUKSIO_URL: url, FLUKSIO_RUNNER_TOKEN: token },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const nextLine = async (): Promise<string> => {
    const { value, done } = await lines.next();
    if (done) throw new Error('the runner process ended');
    return value;
  };
  return {
    async claim() {
      child.stdin.write('claim\n');
      const { at, runId } = JSON.parse(await nextLine()) as { at: number; runId: string | null };
      return { at, runId, finished: nextLine().then(() => undefined) };
    },
    async close() {
      child.stdin.end();
      await exited(child);
    },
  };
}

/** Now, in ms since the epoch, comparable across processes on one machine. */
export const epochNow = (): number => performance.timeOrigin + performance.now();

/**
 * `samples` times: a runner parks a claim (seen parked on `url`'s gauge), a run it may take
 * is submitted, and the time until the claim's answer reaches the runner is taken.
 */
export async function measureSubmitToClaim({
  url,
  runner,
  submit,
  reference,
  timing,
  samples,
  warmup = 0,
}: {
  url: string;
  runner: ClaimingRunner;
  submit: (key: string) => Promise<unknown>;
  reference: CommitReference;
  /** A connection for reading each run's `queued_at`. */
  timing: postgres.Sql;
  samples: number;
  /**
   * Samples taken first and left out, as a process in service has long taken them: its
   * code optimized, and PostgreSQL keeping a plan for the INSERT on each pooled
   * connection (it plans a prepared statement afresh for its first five executions on a
   * connection). @defaultValue 0
   */
  warmup?: number;
}): Promise<SubmitToClaim> {
  const result: SubmitToClaim = { latencies: [], queuedToClaimed: [], commits: [] };
  const key = `latency-${Math.random().toString(36).slice(2)}`;
  for (let i = -warmup; i < samples; i += 1) {
    const kept = i >= 0;
    if (kept) result.commits.push(await reference.time());
    const answer = runner.claim();
    await parkedClaim(url);
    const started = epochNow();
    await submit(`${key}-${i}`);
    const { at, runId, finished } = await answer;
    if (runId === null) throw new Error('the waiting runner got no run');
    if (kept) {
      result.latencies.push(at - started);
      const [row] = await timing<
        { queued: Date }[]
      >`select queued_at as queued from runs where id = ${runId}`;
      if (row) result.queuedToClaimed.push(at - row.queued.getTime());
    }
    await finished;
  }
  return result;
}

/** Resolves once a claim is parked in the control plane at `url` (its `fluksio_claims_parked` gauge). */
async function parkedClaim(url: string): Promise<void> {
  for (;;) {
    const scrape = await (await fetch(`${url}/metrics`)).text();
    if (/^fluksio_claims_parked 1$/m.test(scrape)) return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
