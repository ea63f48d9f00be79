import { expect, test } from 'vitest';
import type { RunPageData } from '../../schemas/page-data.js';
import { DrivenRun, finishedStage, pageLinks, usePageWorld } from './page-world.js';

// Runs may come from an intranet host `scm` and from local paths too.
const world = usePageWorld({
  env: { FLUKSIO_CLONE_HOSTS: 'github.com,scm', FLUKSIO_ALLOW_FILE_URLS: 'true' },
});

const TRACEBACK = [
  'Traceback (most recent call last):',
  '  File "/work/run/train.py", line 17, in main',
  '    1 / 0',
  'ZeroDivisionError: division by zero',
];

/** A run of `repository` whose train stage failed with a traceback raised at train.py:17; its page data. */
async function failedRunPage(origin?: { repository: string; cloneUrl: string }): Promise<RunPageData> {
  const repository = origin?.repository ?? 'acme/model';
  const owner = repository.split('/')[0]!;
  const submitter = origin ? await world.plane.addApiToken({ repositories: [repository] }) : world.submitter;
  const runnerToken = origin
    ? (await world.plane.addRunner({ name: `r-${owner}-${Date.now()}`, owner })).token
    : world.runnerToken;
  const run = await DrivenRun.start(world.plane, { submitter, runnerToken, ...(origin ? { origin } : {}) });
  await run.events(
    { type: 'stage.started', stage: 'train', at: new Date().toISOString() },
    {
      type: 'annotation',
      annotation: {
        stage: 'train',
        path: 'train.py',
        line: 17,
        level: 'error',
        message: 'ZeroDivisionError: division by zero',
        title: null,
      },
    },
    {
      type: 'stage.finished',
      stage: finishedStage('train', {
        status: 'failed',
        exitCode: 1,
        logTail: TRACEBACK.join('\n'),
        error: 'exited with 1',
      }),
    },
  );
  await run.finish('failed', {}, 'Stage train failed');
  const answer = await fetch(`${world.plane.url}/pages/api/runs/${run.id}?${pageLinks.sign(repository)}`);
  expect(answer.status).toBe(200);
  return (await answer.json()) as RunPageData;
}

test("a run fetched from elsewhere links no GitHub repository, though its name is one's owner/name", async () => {
  for (const origin of [
    { repository: 'scm/ml', cloneUrl: 'https://scm/ml' },
    { repository: 'local/srv', cloneUrl: 'file:///srv' },
  ]) {
    const data = await failedRunPage(origin);
    expect(data.tracebacks.map((traceback) => traceback.location)).toEqual(['train.py:17']);
    // github.com/scm/ml is somebody else's repository: its code is not this run's.
    expect(data.commitUrl).toBeNull();
    expect(data.tracebacks.map((traceback) => traceback.url)).toEqual([null]);
  }
  // A GitHub repository's run links its commit and the line that raised.
  const github = await failedRunPage();
  expect(github.commitUrl).toMatch(/^https:\/\/github\.com\/acme\/model\/commit\/[0-9a-f]{40}$/);
  expect(github.tracebacks.map((traceback) => traceback.url)).toEqual([
    expect.stringMatching(/^https:\/\/github\.com\/acme\/model\/blob\/[0-9a-f]{40}\/train\.py#L17$/),
  ]);
});
