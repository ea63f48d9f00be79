import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runCli, runJson, stageOf, statuses, type RunJson } from '../helpers/run-cli.js';

let repo: TestRepo;
afterEach(async () => {
  await repo?.cleanup();
});

describe('the stage graph', () => {
  /** A stage that records when it started and ended, sleeping in between. */
  const timed = (name: string) => `  ${name}:
    cmd: date +%s%N > ${name}.txt && sleep 1 && date +%s%N >> ${name}.txt
    outs: [${name}.txt]
`;
  const interval = async (name: string) => {
    const [start, end] = (await readFile(join(repo.dir, `${name}.txt`), 'utf8'))
      .trim()
      .split('\n')
      .map(BigInt);
    return { start: start as bigint, end: end as bigint };
  };
  const overlap = async (a: string, b: string) => {
    const [x, y] = [await interval(a), await interval(b)];
    return x.start < y.end && y.start < x.end;
  };

  test('independent stages run in parallel up to --jobs, dependents after their inputs', async () => {
    repo = await makeRepo({
      files: {
        'fluksio.yml': `version: 1\nstages:\n${timed('left')}${timed('right')}  join:
    cmd: date +%s%N > join.txt && cat left.txt right.txt > both.txt && date +%s%N >> join.txt
    deps: [left.txt, right.txt]
    outs: [both.txt, join.txt]
`,
      },
    });
    const { code } = await runJson(['--jobs', '2'], { cwd: repo.dir });
    expect(code).toBe(0);
    expect(await overlap('left', 'right')).toBe(true);
    const join_ = await interval('join');
    expect(join_.start).toBeGreaterThanOrEqual((await interval('left')).end);
    expect(join_.start).toBeGreaterThanOrEqual((await interval('right')).end);
  });

  test('with --jobs 1 stages run one at a time', async () => {
    repo = await makeRepo({ files: { 'fluksio.yml': `version: 1\nstages:\n${timed('a')}${timed('b')}` } });
    await runJson([], { cwd: repo.dir });
    expect(await overlap('a', 'b')).toBe(false);
  });
});

describe('time limits and cancellation', () => {
  test('a stage over its timeout is timed_out and the run too', async () => {
    repo = await makeRepo({
      files: {
        'fluksio.yml': `version: 1
stages:
  slow:
    cmd: sleep 30
    outs: [never.txt]
    timeout: 1s
`,
      },
    });
    const { code, report } = await runJson([], { cwd: repo.dir });
    expect(code).toBe(1);
    expect(report.run.status).toBe('timed_out');
    expect(stageOf(report, 'slow')).toMatchObject({ status: 'timed_out', error: 'timed out after 1s' });
  });

  test('cancelling stops the running stage and records the run cancelled', async () => {
    repo = await makeRepo({
      files: {
        'fluksio.yml': `version: 1
stages:
  long:
    cmd: touch started && sleep 600
    outs: [a.txt]
  after:
    cmd: cat a.txt > b.txt
    deps: [a.txt]
    outs: [b.txt]
`,
      },
    });
    const controller = new AbortController();
    // Cancel once the stage is running, however long the machine takes to get there.
    let ended = false;
    const running = (async () => {
      while (!ended && !existsSync(join(repo.dir, 'started'))) await delay(50);
      controller.abort();
    })();
    const result = await runCli(['run', '--json'], { cwd: repo.dir, signal: controller.signal });
    ended = true;
    await running;
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as RunJson;
    expect(report.run.status).toBe('cancelled');
    expect(statuses(report)).toEqual({ long: 'cancelled', after: 'skipped' });
  });
});

describe('sweeps and output', () => {
  test('a sweep runs the grid as one group and prints {group, runs}', async () => {
    repo = await makeRepo({
      files: {
        'fluksio.yml': `version: 1
params:
  a: { type: int, default: 1 }
  b: { type: string, default: x }
stages:
  s:
    cmd: echo "::metric name=score::\${a}" && echo \${b} > out.txt
    params: [a, b]
    outs: [out.txt]
`,
      },
    });
    const result = await runCli(['run', '--json', 'a=1,2', 'b=x,y'], { cwd: repo.dir });
    expect(result.code).toBe(0);
    const sweep = JSON.parse(result.stdout) as { group: string; runs: RunJson[] };
    expect(sweep.group).toMatch(/^[0-9A-Z]{26}$/);
    expect(sweep.runs.map((run) => run.run.params)).toEqual([
      { a: 1, b: 'x' },
      { a: 1, b: 'y' },
      { a: 2, b: 'x' },
      { a: 2, b: 'y' },
    ]);
    expect(sweep.runs.map((run) => run.metrics.score)).toEqual([1, 1, 2, 2]);
  });

  test('binary output, a metric at step 3,000,000,000, a 3,000-character metric name and line 3,000,000,000: the run is stored', async () => {
    repo = await makeRepo({
      files: {
        'fluksio.yml': `version: 1
stages:
  s:
    cmd: printf 'a\\000b\\n' && echo "::metric name=tokens,step=3000000000::0.5" && echo "::metric name=${'x'.repeat(3000)}::1" && echo "::warning file=fluksio.yml,line=3000000000::far"
`,
      },
    });
    const result = await runJson([], { cwd: repo.dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toContain('could not be delivered');
    expect(result.report.metrics).toEqual({ tokens: 0.5 });
    expect(result.report.annotations).toMatchObject([{ message: 'far', line: null }]);
    const show = await runCli(['show', result.report.run.id, '--log', 's'], { cwd: repo.dir });
    expect(show.stdout).toContain('a\uFFFDb');
    const series = await runCli(['show', result.report.run.id, '--json'], { cwd: repo.dir });
    expect(series.code).toBe(0);
  });

  test('--json prints the documented object', async () => {
    repo = await makeRepo({
      files: {
        'fluksio.yml': `version: 1
metrics:
  score: { goal: max }
stages:
  s:
    cmd: echo "::metric name=score::3" && echo "::metric name=score::4" && echo done > out.txt
    outs: [out.txt]
`,
      },
    });
    const { report } = await runJson([], { cwd: repo.dir });
    expect(report).toMatchObject({
      run: {
        id: expect.stringMatching(/^[0-9A-Z]{26}$/),
        commit: expect.stringMatching(/^[0-9a-f]{40}$/),
        dirty: false,
        codeDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
        paramsDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
        params: {},
        status: 'succeeded',
      },
      stages: [
        {
          name: 's',
          status: 'ran',
          cacheKey: expect.stringMatching(/^[0-9a-f]{64}$/),
          cachedFrom: null,
          reasons: ['no earlier run of this stage'],
          durationMs: expect.any(Number),
        },
      ],
      metrics: { score: 4 },
      baseline: null,
      diff: [{ name: 'score', baseline: null, value: 4, delta: null }],
      annotations: [],
    });
  });
});

describe('pipelines anywhere', () => {
  test('a pipeline in a subdirectory runs there, with paths relative to its file', async () => {
    repo = await makeRepo({
      files: {
        'README.md': '# monorepo\n',
        'ml/fluksio.yml': `version: 1
stages:
  s:
    cmd: pwd > where.txt && cat input.txt >> where.txt
    deps: [input.txt]
    outs: [where.txt]
`,
        'ml/input.txt': 'hello\n',
      },
    });
    const { code, report } = await runJson(['--pipeline', 'ml/fluksio.yml'], { cwd: repo.dir });
    expect(code).toBe(0);
    expect(await readFile(join(repo.dir, 'ml', 'where.txt'), 'utf8')).toBe(
      `${join(repo.dir, 'ml')}\nhello\n`,
    );
    const again = await runJson([], { cwd: join(repo.dir, 'ml') });
    expect(stageOf(again.report, 's').cachedFrom).toBe(report.run.id);
  });
});

describe('runs, show and diff', () => {
  test('list the runs, show one by prefix, and diff two', async () => {
    repo = await makeRepo({
      files: {
        'fluksio.yml': `version: 1
params:
  v: { type: float, default: 1 }
metrics:
  score: { goal: max }
stages:
  s:
    cmd: echo "::metric name=score::\${v}" && echo ok > out.txt
    params: [v]
    outs: [out.txt]
`,
      },
    });
    const first = await runJson(['v=1'], { cwd: repo.dir });
    const second = await runJson(['v=1.5'], { cwd: repo.dir });
    const runs = await runCli(['runs'], { cwd: repo.dir });
    expect(runs.stdout).toContain(first.report.run.id);
    expect(runs.stdout.indexOf(second.report.run.id)).toBeLessThan(runs.stdout.indexOf(first.report.run.id));

    const show = await runCli(['show', second.report.run.id.slice(0, 20)], { cwd: repo.dir });
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`Run ${second.report.run.id} succeeded`);
    expect(show.stdout).toMatch(/score\s+1\s+1\.5\s+\+0\.5\s+\+50%\s+✅ better/);

    const diff = await runCli(['diff', second.report.run.id, first.report.run.id, '--json'], {
      cwd: repo.dir,
    });
    expect(JSON.parse(diff.stdout).diff).toEqual([
      { name: 'score', baseline: 1, value: 1.5, delta: 0.5, deltaPct: 50, better: true },
    ]);

    const missing = await runCli(['show', 'ZZZZ'], { cwd: repo.dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('No run matches "ZZZZ"');
  });
});
