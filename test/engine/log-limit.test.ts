import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runCli, runJson, stageOf } from '../helpers/run-cli.js';

let repo: TestRepo;
afterEach(async () => {
  await repo?.cleanup();
});

const SPAM_BYTES = Array.from({ length: 10_000 }, (_, i) => `spam line ${i}\n`.length).reduce(
  (a, b) => a + b,
);

test('a stage printing past its log_limit runs to the end, its stored log is capped with a marker, and a later ::metric still counts', async () => {
  repo = await makeRepo({
    files: {
      '.gitignore': 'done.txt\n',
      'fluksio.yml': `version: 1
stages:
  noisy:
    # Far more than a pipe holds, then a metric, then its out.
    cmd: seq 0 9999 | sed 's/^/spam line /' && echo '::metric name=loss::0.25' && echo done > done.txt
    outs: [done.txt]
    log_limit: 4KiB
`,
    },
  });
  const { code, report } = await runJson([], { cwd: repo.dir });
  expect(code).toBe(0);
  expect(stageOf(report, 'noisy').status).toBe('ran');
  expect(report.metrics).toEqual({ loss: 0.25 });
  // Its process was neither killed nor blocked on a full pipe: it went on to write its out.
  expect(await readFile(join(repo.dir, 'done.txt'), 'utf8')).toBe('done\n');

  const shown = await runCli(['show', report.run.id, '--log', 'noisy', '--json'], { cwd: repo.dir });
  expect(shown.code).toBe(0);
  const { log } = JSON.parse(shown.stdout) as { log: string };
  const lines = log.split('\n').slice(0, -1);
  const kept = lines.filter((line) => line.startsWith('spam line '));
  expect(lines[0]).toBe('spam line 0');
  expect(kept.reduce((sum, line) => sum + line.length + 1, 0)).toBeLessThanOrEqual(4096);
  expect(lines.slice(kept.length)).toEqual([
    expect.stringMatching(/^fluksio: this stage's log reached its limit of 4\.0 KiB \(log_limit\)/),
    `fluksio: dropped ${SPAM_BYTES - log.indexOf('fluksio: ')} bytes (${10_000 - kept.length} lines) of output past the log limit of 4.0 KiB`,
  ]);
});

test('a log_limit that is no size, or beyond 1GiB, is refused naming the stage', async () => {
  repo = await makeRepo({
    files: {
      'fluksio.yml': `version: 1
log_limit: 2GiB
stages:
  noisy:
    cmd: echo hi
    log_limit: lots
`,
    },
  });
  const { code, stderr } = await runCli(['run'], { cwd: repo.dir });
  expect(code).toBe(2);
  expect(stderr).toContain(
    'log_limit: "2GiB": expected a size like 64MiB, 512KiB or 1GiB, from 1KiB to 1GiB',
  );
  expect(stderr).toContain('stages.noisy.log_limit: "lots" is not a size');
});
