/**
 * A runner's event upload killed with -9 at the worst moment for merging (run by
 * merged-events-killed.test.ts as its own process): once its first event is stored, it
 * emits in one tick a stage's lines, its points and its end, then another stage's start, a
 * point and lines, and kills itself before the timer that hands the merged lines on can fire. What
 * reached the journal is what a runner killed there leaves for the next one.
 */
import { ControlPlaneClient } from '../../../client/control-plane-client.js';
import { RemoteEventSink } from '../../../runner/daemon/remote-event-sink.js';
import { emptyStageRecord } from '../../../schemas/stage-record.js';

interface Setup {
  url: string;
  token: string;
  runId: string;
  lease: string;
  journal: string;
  spool: string;
  lines: number;
}

const setup = JSON.parse(process.argv[2] ?? '{}') as Setup;
const client = new ControlPlaneClient({ url: setup.url, token: setup.token });
const events = new RemoteEventSink({
  client,
  run: { runId: setup.runId, lease: setup.lease },
  attempt: 1,
  journal: { file: setup.journal },
  spool: { file: setup.spool, maxMemoryBytes: 1 << 20 },
});
const at = new Date().toISOString();
events.emit({ type: 'stage.started', stage: 'prepare', at });
await events.flush();

for (let i = 0; i < setup.lines; i++)
  events.emit({ type: 'stage.log', stage: 'prepare', lines: [`prepare line ${i}`] });
for (let i = 0; i < setup.lines; i++)
  events.emit({ type: 'metric.points', points: [{ stage: 'prepare', name: 'seen', step: i, value: i }] });
events.emit({
  type: 'stage.finished',
  stage: { ...emptyStageRecord('prepare', 'ran'), metrics: { seen: setup.lines - 1 } },
});
events.emit({ type: 'stage.started', stage: 'train', at });
events.emit({ type: 'metric.points', points: [{ stage: 'train', name: 'loss', step: 0, value: 1 }] });
for (let i = 0; i < setup.lines; i++)
  events.emit({ type: 'stage.log', stage: 'train', lines: [`train line ${i}`] });
process.kill(process.pid, 'SIGKILL');
