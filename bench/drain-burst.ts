import { Claim } from '../schemas/protocol/claim.js';

/** What draining a burst of runs measured. */
export interface BurstResult {
  runsPerSecond: number;
  drainMs: number;
  /** Runs of the burst that ended `succeeded` (the rest were lost). */
  succeeded: number;
  /** Runs handed to more than one claim. */
  claimedTwice: number;
  /** Submissions sent again after their connection failed. */
  resubmitted: number;
  /** Claims and finishes whose connection failed (the client went on). */
  failedConnections: number;
}

/**
 * A burst through the control plane at `url`: `burst` no-op runs queued at once (50
 * submissions in flight), then drained by the runner clients — one loop per token of
 * claim (no wait) and finish until a claim answers 204. `countSucceeded` reads from the
 * database how many of the burst's runs (trigger keys containing `keyPrefix`) succeeded.
 */
export async function drainBurst({
  url,
  submitToken,
  runnerTokens,
  burst,
  keyPrefix,
  countSucceeded,
}: {
  url: string;
  submitToken: string;
  runnerTokens: readonly string[];
  burst: number;
  keyPrefix: string;
  countSucceeded(keyPrefix: string): Promise<number>;
}): Promise<BurstResult> {
  const post = async (path: string, token: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status >= 400) throw new Error(`${path} answered ${response.status}: ${text}`);
    return { status: response.status, json: text ? (JSON.parse(text) as unknown) : null };
  };
  // A submission whose connection failed is sent again, as `fluksio submit` does: its
  // Idempotency-Key makes the retry return the run the first attempt may have made.
  let resubmitted = 0;
  const submit = async (key: string) => {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await post(
          '/api/v1/runs',
          submitToken,
          { repository: 'bench/model', commit: 'b'.repeat(40), labels: ['cpu'] },
          { 'idempotency-key': key },
        );
      } catch (error) {
        if (!(error instanceof TypeError) || attempt === 3) throw error;
        resubmitted += 1;
      }
    }
  };
  for (let i = 0; i < burst; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, burst - i) }, (_, j) => submit(`${keyPrefix}${i + j}`)),
    );
  }
  const claims = new Map<string, number>();
  let failedConnections = 0;
  const started = performance.now();
  await Promise.all(
    runnerTokens.map(async (token) => {
      for (;;) {
        try {
          const { status, json } = await post('/api/v1/runner/claim', token, { waitSeconds: 0 });
          if (status === 204) return;
          const claimed = Claim.parse(json);
          claims.set(claimed.run.id, (claims.get(claimed.run.id) ?? 0) + 1);
          await post(`/api/v1/runs/${claimed.run.id}/finish`, token, {
            lease: claimed.lease,
            status: 'succeeded',
            reason: null,
            metrics: {},
          });
        } catch (error) {
          // A connection that failed is counted and the client goes on, as a runner does; a
          // run whose claim or finish it carried stays leased (until the sweeper takes it
          // back) and so is counted as lost here.
          if (!(error instanceof TypeError)) throw error;
          failedConnections += 1;
        }
      }
    }),
  );
  const drainMs = performance.now() - started;
  return {
    runsPerSecond: burst / (drainMs / 1000),
    drainMs,
    succeeded: await countSucceeded(keyPrefix),
    claimedTwice: [...claims.values()].filter((n) => n > 1).length,
    resubmitted,
    failedConnections,
  };
}
