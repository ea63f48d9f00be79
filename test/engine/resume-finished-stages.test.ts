import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { openLocalState, type LocalState } from '../../local/local-state.js';
import { locateProject } from '../../local/locate-project.js';
import { readCodeIndex } from '../../runner/keys/code-index.js';
import type { EventSink } from '../../runner/ports.js';
import { runPipeline } from '../../runner/run-pipeline.js';
import { Pipeline } from '../../schemas/pipeline.js';
import type { RunEventBody } from '../../schemas/run-event.js';
import type { StageRecord } from '../../schemas/stage-record.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';

let repo: TestRepo | undefined;
let state: LocalState | undefined;
afterEach(async () => {
  await state?.close();
  await repo?.cleanup();
});

/** Collects what the engine reports. */
function collector(): EventSink & { events: RunEventBody[] } {
  const events: RunEventBody[] = [];
  return { events, emit: (event) => void events.push(event), flush: () => Promise.resolve() };
}

const pipeline = Pipeline.parse({
  version: 1,
  stages: {
    prepare: { cmd: 'echo prepared >> prepare-count && echo rows > data.txt', outs: ['data.txt'] },
    deploy: { cmd: 'echo deployed >> deploy-count', deps: ['data.txt'], cache: false },
    report: { cmd: 'cat data.txt > report.txt', deps: ['data.txt'], outs: ['report.txt'] },
  },
});

describe('a run resumed in the same attempt', () => {
  test('keeps the records of the stages that finished before the restart, and runs none of them again (a cache: false deploy step included)', async () => {
    repo = await makeRepo({ files: { 'fluksio.yml': 'version: 1\nstages: {}\n' } });
    const project = await locateProject(undefined, repo.dir);
    state = await openLocalState(project.stateDir);
    const run = async (finished: readonly StageRecord[], stages?: readonly string[]) => {
      const events = collector();
      const outcome = await runPipeline({
        runId: 'RESUMED',
        workspace: project.workspace,
        pipeline,
        params: {},
        codeIndex: await readCodeIndex(project.workspace.repoRoot),
        environment: process.env,
        jobs: 1,
        noCache: false,
        cache: (state as LocalState).cacheFor({ id: 'RESUMED', pipelinePath: project.pipelinePath }),
        blobs: (state as LocalState).blobs,
        events,
        finished,
        ...(stages ? { stages } : {}),
      });
      return { outcome, events: events.events };
    };

    // Before the restart: prepare ran and deploy deployed; report had not finished.
    const before = await run([], ['prepare', 'deploy']);
    const finished = before.outcome.stages;
    expect(finished.map((stage) => [stage.name, stage.status])).toEqual([
      ['prepare', 'ran'],
      ['deploy', 'ran'],
    ]);
    // What prepare wrote is put back for the stages still to run.
    await rm(join(repo.dir, 'data.txt'));

    const after = await run(finished);
    expect(after.outcome.status).toBe('succeeded');
    expect(after.outcome.stages.slice(0, 2)).toEqual(finished);
    expect(after.outcome.stages[2]).toMatchObject({ name: 'report', status: 'ran' });
    const reported = after.events.flatMap((event) =>
      event.type === 'stage.started'
        ? [event.stage]
        : event.type === 'stage.finished'
          ? [event.stage.name]
          : [],
    );
    expect(reported).toEqual(['report', 'report']);
    expect(await readFile(join(repo.dir, 'deploy-count'), 'utf8')).toBe('deployed\n');
    expect(await readFile(join(repo.dir, 'prepare-count'), 'utf8')).toBe('prepared\n');
    expect(await readFile(join(repo.dir, 'report.txt'), 'utf8')).toBe('rows\n');
  });
});
