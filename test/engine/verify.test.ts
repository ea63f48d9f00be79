import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, test } from 'vitest';
import { openLocalState } from '../../local/local-state.js';
import type { VerifyReport } from '../../schemas/stage-verification.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { makeMlProject, ML_FILES } from '../helpers/ml-project.js';
import { runCli, runJson, statuses } from '../helpers/run-cli.js';

let repo: TestRepo;
afterEach(async () => {
  await repo?.cleanup();
});

const env = { DEVICE: 'cpu' };
/** Each test runs a pipeline and re-executes it, python3 starting ~0.6 s a time here: room for a loaded machine. */
const SLOW = 180_000;

async function verify(args: string[], cwd = repo.dir) {
  const result = await runCli(['verify', '--json', ...args], { cwd, env });
  let report: VerifyReport;
  try {
    report = JSON.parse(result.stdout) as VerifyReport;
  } catch {
    throw new Error(
      `fluksio verify printed no JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`,
    );
  }
  return { ...result, report };
}

const verdicts = (report: VerifyReport) =>
  Object.fromEntries(report.stages.map((stage) => [stage.stage, stage.verdict]));
const verificationOf = (report: VerifyReport, stage: string) => {
  const found = report.stages.find((each) => each.stage === stage);
  if (!found) throw new Error(`${stage} was not verified: ${JSON.stringify(report)}`);
  return found;
};
const fileDigest = (path: string) =>
  `sha256:${createHash('sha256').update(readFileSync(path)).digest('hex')}`;

/** examples/logreg as this repository has it, bytecode left out. */
function exampleFiles(): Record<string, string> {
  const dir = join(import.meta.dirname, '..', '..', 'examples', 'logreg');
  return Object.fromEntries(
    readdirSync(dir)
      .filter((name) => name.endsWith('.py') || name.endsWith('.yml'))
      .map((name) => [`examples/logreg/${name}`, readFileSync(join(dir, name), 'utf8')]),
  );
}

describe('fluksio verify on honest caches', { timeout: SLOW }, () => {
  test('the example pipeline, in a subfolder of its repository: every stage deterministic', async () => {
    repo = await makeRepo({
      files: {
        ...exampleFiles(),
        '.gitignore':
          '__pycache__/\n/examples/logreg/data/\n/examples/logreg/model.json\n/examples/logreg/metrics/\n',
      },
    });
    const pipeline = ['--pipeline', 'examples/logreg/fluksio.yml'];
    const run = await runJson(pipeline, { cwd: repo.dir, env });
    expect(run.code, run.stderr).toBe(0);
    const statusBefore = await repo.git('status', '--porcelain', '--ignored');

    const { code, report, stderr } = await verify([run.report.run.id.slice(0, 10), ...pipeline]);
    expect(stderr).toBe('');
    expect(verdicts(report)).toEqual({
      prepare: 'deterministic',
      train: 'deterministic',
      evaluate: 'deterministic',
    });
    expect(report).toMatchObject({ run: run.report.run.id, commit: run.report.run.commit, ok: true });
    expect(report.notVerified).toEqual([]);
    expect(code).toBe(0);
    // The user's work tree and repository are left as they were: no scratch work tree remains.
    expect(await repo.git('status', '--porcelain', '--ignored')).toBe(statusBefore);
    expect((await repo.git('worktree', 'list')).trim().split('\n')).toHaveLength(1);
  });

  test('a run whose stages all came from the cache verifies the entries it used', async () => {
    repo = await makeMlProject();
    const first = await runJson([], { cwd: repo.dir, env });
    const second = await runJson([], { cwd: repo.dir, env });
    expect(statuses(second.report)).toEqual({ prepare: 'cached', train: 'cached', evaluate: 'cached' });

    const text = await runCli(['verify', second.report.run.id], { cwd: repo.dir, env });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/✓ deterministic\s+train\b.*entry of run/);
    expect(text.stdout).toContain('3 deterministic: the cache can be trusted');
    const { report } = await verify([second.report.run.id]);
    for (const stage of report.stages) expect(stage.entryRun).toBe(first.report.run.id);
  });
});

describe('a dep the commit does not hold (ignored data)', { timeout: SLOW }, () => {
  test('is copied from the work tree; once edited there, its stage is unverifiable, not stale', async () => {
    repo = await makeMlProject({ '.gitignore': `${ML_FILES['.gitignore']}/raw.csv\n` });
    expect(await repo.git('ls-files', 'raw.csv')).toBe('');
    const run = await runJson([], { cwd: repo.dir, env });
    expect(run.code, run.stderr).toBe(0);

    const honest = await verify([run.report.run.id, '--stage', 'prepare']);
    expect(verificationOf(honest.report, 'prepare')).toMatchObject({
      verdict: 'deterministic',
      findings: ['raw.csv is not in the commit: copied from the work tree'],
    });
    expect(honest.code).toBe(0);

    await repo.write('raw.csv', '5\n6\n');
    const edited = await verify([run.report.run.id, '--stage', 'prepare']);
    expect(verificationOf(edited.report, 'prepare')).toMatchObject({
      verdict: 'unverifiable',
      findings: [
        "raw.csv is not in the commit, and the work tree's copy differs from the one the entry was made from",
      ],
    });
    expect(edited.code).toBe(1);
  });
});

describe('a stage that does not make the same bytes twice', { timeout: SLOW }, () => {
  const clockFiles = {
    ...ML_FILES,
    '.gitignore': `${ML_FILES['.gitignore']}/clock.txt\n/noise.bin\n`,
    'fluksio.yml': `${ML_FILES['fluksio.yml']}  clock:
    cmd: date -u +%H:%M:%S > clock.txt
    outs: [clock.txt]
  noise:
    cmd: python3 -c "import os; open('noise.bin', 'wb').write(os.urandom(32))"
    outs: [noise.bin]
`,
  };

  test('is nondeterministic, never stale, with the cached and fresh digests of its out', async () => {
    repo = await makeRepo({ files: clockFiles });
    const run = await runJson([], { cwd: repo.dir, env });
    expect(run.code, run.stderr).toBe(0);
    const cachedClock = fileDigest(join(repo.dir, 'clock.txt'));
    const cachedNoise = fileDigest(join(repo.dir, 'noise.bin'));
    const blobsBefore = await blobCount();
    // clock.txt holds the time to the second: verify re-executes it in a later second.
    const ranIn = Math.floor(Date.now() / 1000);
    while (Math.floor(Date.now() / 1000) === ranIn) await sleep(20);

    const { code, report, stdout } = await verify([run.report.run.id, '--all']);
    expect(verdicts(report)).toEqual({
      prepare: 'deterministic',
      train: 'deterministic',
      evaluate: 'deterministic',
      clock: 'nondeterministic',
      noise: 'nondeterministic',
    });
    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    for (const [stage, path, cached] of [
      ['clock', 'clock.txt', cachedClock],
      ['noise', 'noise.bin', cachedNoise],
    ] as const) {
      const verification = verificationOf(report, stage);
      expect(verification.executions).toBe(2);
      expect(verification.outs).toHaveLength(1);
      const [out] = verification.outs;
      expect(out).toMatchObject({ path, cached });
      expect(out?.fresh).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(out?.fresh).not.toBe(cached);
      expect(out?.again).not.toBe(out?.fresh);
    }
    expect(stdout).not.toContain('stale');
    // What the re-executions made went to a scratch store, not the project's.
    expect(await blobCount()).toBe(blobsBefore);
  });

  test('the terminal names the out that differs, with both digests, and the exit code is 1', async () => {
    repo = await makeRepo({ files: clockFiles });
    const run = await runJson([], { cwd: repo.dir, env });
    const cachedNoise = fileDigest(join(repo.dir, 'noise.bin'));
    const text = await runCli(['verify', run.report.run.id, '--stage', 'noise'], { cwd: repo.dir, env });
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/✗ nondeterministic\s+noise/);
    expect(text.stdout).toContain(`noise.bin  cached ${cachedNoise.slice(7, 19)}  fresh `);
    expect(text.stdout).toContain('1 nondeterministic (noise)');
  });
});

async function blobCount(): Promise<number> {
  const root = join(repo.dir, '.fluksio', 'blobs', 'sha256');
  let count = 0;
  for (const dir of await readdir(root)) count += (await readdir(join(root, dir))).length;
  return count;
}

describe('a stale entry', { timeout: SLOW }, () => {
  test('whose stored key inputs were altered is stale, naming the input, not nondeterministic', async () => {
    repo = await makeMlProject();
    const run = await runJson([], { cwd: repo.dir, env });
    const trainKey = run.report.stages.find((stage) => stage.name === 'train')?.cacheKey as string;
    const state = await openLocalState(join(repo.dir, '.fluksio'));
    try {
      const indexed = await state.index.cacheEntry(trainKey);
      if (!indexed) throw new Error('train has no cache entry');
      const { entry } = indexed;
      const keyInputs = {
        ...entry.keyInputs,
        deps: { ...entry.keyInputs.deps, 'train.py': `sha256:${'0'.repeat(64)}` },
      };
      await state.index.recordCacheEntry({ ...indexed, entry: { ...entry, keyInputs } });
    } finally {
      await state.close();
    }

    const { code, report } = await verify([run.report.run.id]);
    expect(verdicts(report)).toEqual({ prepare: 'deterministic', train: 'stale', evaluate: 'deterministic' });
    expect(verificationOf(report, 'train').findings).toEqual([
      "key input differs from the entry's: train.py changed",
    ]);
    expect(code).toBe(1);
  });

  test('whose stored outputs were swapped for other bytes is stale, not nondeterministic', async () => {
    repo = await makeMlProject();
    const run = await runJson([], { cwd: repo.dir, env });
    const keyOf = (name: string) =>
      run.report.stages.find((stage) => stage.name === name)?.cacheKey as string;
    const state = await openLocalState(join(repo.dir, '.fluksio'));
    let swapped: string;
    try {
      const prepare = (await state.index.cacheEntry(keyOf('prepare')))?.entry;
      const train = await state.index.cacheEntry(keyOf('train'));
      if (!prepare || !train) throw new Error('prepare or train has no cache entry');
      // model.txt now names data/clean.csv's blob: real bytes, just not train's.
      swapped = prepare.outs[0]?.digest as string;
      const outs = train.entry.outs.map((out) =>
        out.path === 'model.txt' ? { ...out, digest: swapped } : out,
      );
      await state.index.recordCacheEntry({ ...train, entry: { ...train.entry, outs } });
    } finally {
      await state.close();
    }

    const { code, report } = await verify([run.report.run.id, '--stage', 'train']);
    const train = verificationOf(report, 'train');
    expect(train.verdict).toBe('stale');
    expect(train.outs).toEqual([
      {
        path: 'model.txt',
        cached: swapped,
        fresh: fileDigest(join(repo.dir, 'model.txt')),
        again: fileDigest(join(repo.dir, 'model.txt')),
      },
    ]);
    expect(code).toBe(1);
  });

  test('whose stage reads a file its key does not cover is stale, not nondeterministic', async () => {
    // A file outside the repository: no dep, code digest or read set can key it.
    const outside = await mkdtemp(join(tmpdir(), 'fluksio-words-'));
    try {
      await writeFile(join(outside, 'words.txt'), 'quiet\n');
      repo = await makeRepo({
        files: {
          '.gitignore': '/loud.txt\n',
          'fluksio.yml': 'version: 1\nstages:\n  shout:\n    cmd: sh shout.sh\n    outs: [loud.txt]\n',
          'shout.sh': `tr a-z A-Z < '${join(outside, 'words.txt')}' > loud.txt\n`,
        },
      });
      const first = await runJson([], { cwd: repo.dir, env });
      expect(first.code, first.stderr).toBe(0);
      await writeFile(join(outside, 'words.txt'), 'louder\n');
      const second = await runJson([], { cwd: repo.dir, env });
      // The stale hit verify exists to catch: the new words, the old output.
      expect(statuses(second.report)).toEqual({ shout: 'cached' });
      expect(await readFile(join(repo.dir, 'loud.txt'), 'utf8')).toBe('QUIET\n');

      const { code, report } = await verify([second.report.run.id]);
      const shout = verificationOf(report, 'shout');
      expect(shout.verdict).toBe('stale');
      expect(shout.executions).toBe(2);
      const louder = `sha256:${createHash('sha256').update('LOUDER\n').digest('hex')}`;
      expect(shout.outs).toEqual([
        { path: 'loud.txt', cached: fileDigest(join(repo.dir, 'loud.txt')), fresh: louder, again: louder },
      ]);
      expect(shout.findings.join(' ')).toContain('an input its key does not cover');
      expect(code).toBe(1);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});

describe('what verify takes', { timeout: SLOW }, () => {
  test('--sample picks that many cached stages, --stage names them, and the rest are listed', async () => {
    repo = await makeMlProject();
    const run = await runJson([], { cwd: repo.dir, env });
    const sampled = await verify([run.report.run.id, '--sample', '1']);
    expect(sampled.report.stages).toHaveLength(1);
    expect(sampled.report.notVerified).toHaveLength(2);
    for (const skipped of sampled.report.notVerified) expect(skipped.why).toBe('not in the sample');

    const named = await verify([run.report.run.id, '--stage', 'evaluate', '--stage', 'prepare']);
    expect(verdicts(named.report)).toEqual({ prepare: 'deterministic', evaluate: 'deterministic' });
    expect(named.code).toBe(0);
  });

  test('bad input exits 2 with a sentence naming it, and runs nothing', async () => {
    repo = await makeMlProject({
      'fluksio.yml': `${ML_FILES['fluksio.yml']}  report:\n    cmd: echo done\n    cache: false\n`,
    });
    const run = await runJson([], { cwd: repo.dir, env });
    const id = run.report.run.id;
    const cases: [string[], RegExp][] = [
      [['NOPE'], /No run matches "NOPE"/],
      [[id, '--stage', 'nope'], /--stage: run .* has no stage "nope" \(it has: [a-z, ]*report/],
      [[id, '--stage', 'report'], /--stage report: cannot be verified: it is not cached \(cache: false\)/],
      [[id, '--sample', '0'], /--sample: "0" is not a whole number ≥ 1/],
      [[id, '--sample', 'many'], /--sample: "many" is not a whole number ≥ 1/],
      [[id, '--all', '--sample', '2'], /--all and --sample exclude each other/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(['verify', ...args], { cwd: repo.dir, env });
      expect(result.stderr, args.join(' ')).toMatch(message);
      expect(result.code, args.join(' ')).toBe(2);
    }
  });

  test('a run made on uncommitted changes is refused: verify re-executes committed trees', async () => {
    repo = await makeMlProject();
    await repo.write('helpers.py', 'def scale(x):\n    return x / 3.0\n');
    const dirty = await runJson([], { cwd: repo.dir, env });
    expect(dirty.report.run.dirty).toBe(true);
    const refused = await runCli(['verify', dirty.report.run.id], { cwd: repo.dir, env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('ran on a work tree with uncommitted changes');
    expect(refused.stderr).toContain('Commit the changes, run again, and verify that run');
  });

  test('a stage not cached in the run is listed as not verified, with why', async () => {
    repo = await makeMlProject({
      'fluksio.yml': `${ML_FILES['fluksio.yml']}  report:\n    cmd: echo done\n    cache: false\n`,
    });
    const run = await runJson([], { cwd: repo.dir, env });
    const { code, report } = await verify([run.report.run.id, '--all']);
    expect(report.notVerified).toEqual([{ stage: 'report', why: 'it is not cached (cache: false)' }]);
    expect(Object.keys(verdicts(report))).toEqual(['prepare', 'train', 'evaluate']);
    expect(code).toBe(0);
  });

  test('--help says what each verdict means', async () => {
    const help = await runCli(['verify', '--help'], { cwd: process.cwd() });
    expect(help.code).toBe(0);
    for (const word of [
      'deterministic',
      'nondeterministic',
      'stale',
      '--sample',
      '--all',
      '--stage',
      '--json',
    ]) {
      expect(help.stdout).toContain(word);
    }
  });
});
