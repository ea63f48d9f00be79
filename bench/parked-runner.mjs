// A runner client in a process of its own, for the submit → claim figure as deployed: the
// control plane, the submitter and the runner are three processes. On each "claim" line
// read from stdin it parks a claim, prints when the answer arrived (ms since the epoch, as
// performance.timeOrigin + performance.now(), comparable across processes on one machine)
// with the run's id, finishes the run, then prints "finished".
import { createInterface } from 'node:readline';

const url = process.env.FLUKSIO_URL;
const token = process.env.FLUKSIO_RUNNER_TOKEN;

async function post(path, body) {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 400) throw new Error(`${path} answered ${response.status}: ${text}`);
  return { status: response.status, json: text ? JSON.parse(text) : null };
}

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() !== 'claim') continue;
  const { status, json } = await post('/api/v1/runner/claim', { waitSeconds: 30 });
  const at = performance.timeOrigin + performance.now();
  const runId = status === 204 ? null : json.run.id;
  process.stdout.write(`${JSON.stringify({ at, runId })}\n`);
  if (runId !== null) {
    await post(`/api/v1/runs/${runId}/finish`, {
      lease: json.lease,
      status: 'succeeded',
      reason: null,
      metrics: {},
    });
  }
  process.stdout.write('finished\n');
}
