import type { ControlPlaneClient } from '../../client/control-plane-client.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { messageOf } from '../../core/text/message-of.js';

/** The runs `fluksio submit --wait` follows, cancelled on the control plane at Ctrl-C. */
export interface RunCancels {
  /** A run was queued: cancelled at Ctrl-C unless it ended first (at once when Ctrl-C came already). */
  add(runId: string): void;
  /** A run was followed to its end: there is nothing to cancel. */
  ended(runId: string): void;
  /** Resolves once every cancel request sent has been answered, with the runs it could not cancel. */
  settled(): Promise<string[]>;
}

/** The reason the control plane records on a run cancelled this way. */
const REASON = 'Cancelled with Ctrl-C on fluksio submit --wait';

/**
 * Cancels a submit's runs the moment Ctrl-C comes (`io.signal`), every request at once,
 * each held (`io.holdExit`) so that a second Ctrl-C exits only once they are answered — a
 * sweep's later members are never left running while the message says they are
 * cancelled. A request that fails is said, with the run; a third Ctrl-C exits at once,
 * naming the runs whose request got no answer.
 */
export function cancelRunsOnInterrupt(
  client: ControlPlaneClient,
  io: Pick<CliIo, 'signal' | 'holdExit'>,
  say: (text: string) => void,
): RunCancels {
  const runs: string[] = [];
  const ended = new Set<string>();
  const requests = new Map<string, Promise<string | null>>();

  const cancel = (runId: string) => {
    if (requests.has(runId)) return;
    let answered = false;
    const request = client.cancelRun(runId, { reason: REASON }).then(
      () => null,
      (error: unknown) => {
        say(
          `Could not cancel run ${runId}: ${messageOf(error)}; it may still run (fluksio cancel ${runId})\n`,
        );
        return runId;
      },
    );
    const done = request.finally(() => {
      answered = true;
    });
    requests.set(
      runId,
      io.holdExit
        ? io.holdExit(done, {
            what: 'the cancel requests',
            unfinished: () =>
              answered
                ? null
                : `no answer yet to the cancel request of run ${runId}: it may still run (fluksio cancel ${runId})`,
          })
        : done,
    );
  };

  const onInterrupt = () => {
    const left = runs.filter((runId) => !ended.has(runId));
    if (left.length === 0) return;
    const them = left.length === 1 ? 'the run' : `${left.length} runs`;
    const pronoun = left.length === 1 ? 'it is' : 'they are';
    say(
      `Cancelling ${them} on the control plane (Ctrl-C again to stop waiting for ${left.length === 1 ? 'it' : 'them'} to end; ${pronoun} cancelled all the same)\n`,
    );
    for (const runId of left) cancel(runId);
  };
  io.signal?.addEventListener('abort', onInterrupt, { once: true });

  return {
    add(runId) {
      runs.push(runId);
      if (io.signal?.aborted) cancel(runId);
    },
    ended(runId) {
      ended.add(runId);
    },
    async settled() {
      const failed = await Promise.all(requests.values());
      return failed.filter((runId): runId is string => runId !== null);
    },
  };
}
