// A runner client in a process of its own, for the submit → claim figure as deployed: the
// control plane, the submitter and the runner are three processes. It talks to the control
// plane with fluksio's own client (client/control-plane-client.ts), as `fluksio runner`
// does. On each "claim" line read from stdin it parks a claim, prints when the answer
// arrived (ms since the epoch, as performance.timeOrigin + performance.now(), comparable
// across processes on one machine) with the run's id, finishes the run, then prints
// "finished".
import { createInterface } from 'node:readline';
import { ControlPlaneClient } from '../client/control-plane-client.js';

const client = new ControlPlaneClient({
  url: process.env.FLUKSIO_URL ?? '',
  token: process.env.FLUKSIO_RUNNER_TOKEN ?? '',
});

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() !== 'claim') continue;
  const claim = await client.claim(30, false);
  const at = performance.timeOrigin + performance.now();
  process.stdout.write(`${JSON.stringify({ at, runId: claim?.run.id ?? null })}\n`);
  if (claim !== null) {
    await client.finish(
      { runId: claim.run.id, lease: claim.lease },
      { status: 'succeeded', reason: null, metrics: {} },
    );
  }
  process.stdout.write('finished\n');
}
