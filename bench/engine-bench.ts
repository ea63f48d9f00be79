import { cpSync, mkdtempSync, rmSync, utimesSync, writeFileSync, mkdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sha256Hex } from '../core/canonical-json.js';
import { recordEarlierRuns } from '../test/helpers/record-earlier-runs.js';
import { readCodeIndex } from '../runner/keys/code-index.js';
import { codeDigest } from '../runner/keys/code-digest.js';
import { RACY_WINDOW_MS } from '../runner/keys/stat-cache.js';
import { stageKeyInputs } from '../runner/keys/stage-key-inputs.js';
import { validatePipeline } from '../core/pipeline/validate-pipeline.js';
import { resolveParams } from '../core/params/resolve-params.js';
import { readFileSync } from 'node:fs';
import { median, ms, repeat, timeCommand } from './measure.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(root, 'bin', 'fluksio.js');
const gitEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: '1' };

function git(dir: string, ...args: string[]): void {
  timeCommand('git', args, { cwd: dir, env: gitEnv });
}

function makeExampleRepo(edit: (pipeline: string) => string = (pipeline) => pipeline): string {
  const dir = mkdtempSync(join(tmpdir(), 'fluksio-bench-example-'));
  cpSync(join(root, 'examples', 'logreg'), dir, {
    recursive: true,
    filter: (source) => !/[\\/](\.fluksio|data|metrics|model\.json|__pycache__)$/.test(source),
  });
  writeFileSync(join(dir, 'fluksio.yml'), edit(readFileSync(join(dir, 'fluksio.yml'), 'utf8')));
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, '-c', 'user.name=bench', '-c', 'user.email=bench@fluksio.invalid', 'add', '-A');
  git(dir, '-c', 'user.name=bench', '-c', 'user.email=bench@fluksio.invalid', 'commit', '-qm', 'example');
  return dir;
}

/**
 * The example pipeline: uncached and fully cached `fluksio run`, the cached run as a ratio
 * to `node -e 0`, and the cached run in a second copy of the example whose store holds
 * 1,000 earlier runs (made through the store's own recorder, not by running the CLI). The
 * cached runs of both copies and the reference alternate, so that the machine's drift
 * touches all three alike.
 */
export async function benchExample(history = 1000): Promise<void> {
  const fresh = makeExampleRepo();
  const long = makeExampleRepo();
  // The same stages keyed on their deps alone (`code: false`): a cached run then looks each
  // stage up by its exact key, with no read set to check, which is what tracing adds.
  const exact = makeExampleRepo((pipeline) =>
    pipeline.replace(/^ {4}code: false.*\n/gm, '').replace(/^( {4}cmd: .*)$/gm, '$1\n    code: false'),
  );
  try {
    const run = (dir: string, ...args: string[]) =>
      timeCommand(process.execPath, [cli, 'run', ...args], { cwd: dir });
    const first = run(fresh);
    const uncached = median([run(fresh, '--no-cache'), run(fresh, '--no-cache'), run(fresh, '--no-cache')]);
    run(long);
    run(exact);
    const seeded = performance.now();
    await recordEarlierRuns(join(long, '.fluksio'), history, (i, base) => ({
      params: { ...base.params, lr: (i + 1) / 1000 },
      // Half at other commits, so the baseline index has as many commits to look through.
      commit: i % 2 === 0 ? base.commit : sha256Hex(`earlier commit ${i}`).slice(0, 40),
    }));
    const seedTime = performance.now() - seeded;
    const times = {
      cached: [] as number[],
      long: [] as number[],
      exact: [] as number[],
      node: [] as number[],
    };
    for (let i = 0; i < 7; i += 1) {
      times.cached.push(run(fresh));
      times.long.push(run(long));
      times.exact.push(run(exact));
      times.node.push(timeCommand(process.execPath, ['-e', '0']));
    }
    const gitStatus = median(
      [1, 2, 3, 4, 5].map(() => timeCommand('git', ['status', '--porcelain'], { cwd: fresh })),
    );
    const [cached, withHistory, exactOnly, node] = [times.cached, times.long, times.exact, times.node].map(
      median,
    ) as [number, number, number, number];
    console.log('\n## The example pipeline (examples/logreg, 3 stages), `fluksio run` wall time');
    console.log(`first run (creates .fluksio/)   ${ms(first)}`);
    console.log(`uncached (--no-cache), median  ${ms(uncached)}`);
    console.log(
      `fully cached, median of 7      ${ms(cached)}   ${(cached / node).toFixed(2)}× node -e 0 (target ≤ 5×)`,
    );
    console.log(
      `… ${history} earlier runs stored  ${ms(withHistory)}   ${(withHistory / node).toFixed(2)}× node -e 0, ${((withHistory / cached - 1) * 100).toFixed(1)}% vs a fresh store (target ≤ 10%)`,
    );
    console.log(
      `… exact keys only (code: false) ${ms(exactOnly)}   read-set lookups add ${((cached / exactOnly - 1) * 100).toFixed(1)}% (target ≤ 10%)`,
    );
    console.log(`cached / uncached              ${(cached / uncached).toFixed(2)}×`);
    console.log(
      `for scale: git status          ${ms(gitStatus)}   node -e 0  ${ms(node)}   (${history} runs recorded in ${ms(seedTime)})`,
    );
  } finally {
    rmSync(fresh, { recursive: true, force: true });
    rmSync(long, { recursive: true, force: true });
    rmSync(exact, { recursive: true, force: true });
  }
}

/** The code digest of a generated 5,000-file repository next to `git ls-tree -r HEAD`. */
export async function benchCodeDigest(files = 5000): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'fluksio-bench-digest-'));
  try {
    const listed: string[] = [];
    for (let i = 0; i < files; i += 1) {
      const folder = join(dir, `pkg${i % 50}`, `mod${i % 7}`);
      mkdirSync(folder, { recursive: true });
      listed.push(join(folder, `file${i}.py`));
      writeFileSync(join(folder, `file${i}.py`), `# module ${i}\nVALUE = ${i}\n${'x = 1\n'.repeat(i % 40)}`);
    }
    git(dir, 'init', '-q', '-b', 'main');
    git(dir, 'add', '-A');
    git(dir, '-c', 'user.name=bench', '-c', 'user.email=bench@fluksio.invalid', 'commit', '-qm', 'files');
    let gitListed = 0;
    const digestOnce = async () => {
      const started = performance.now();
      const index = await readCodeIndex(dir);
      codeDigest(index, { pipelineDir: '', include: null, exclude: [] });
      if (index.gitListed) gitListed += 1;
      return performance.now() - started;
    };
    // A tree nobody is editing: files (and directories) changed within the stat cache's
    // racy window are read again on every digest, as they must be. One digest fills the
    // stat cache and makes `.fluksio/`, which changes the top directory; once that has
    // settled too, the next keeps git's listing for the digests after it.
    await sleep(RACY_WINDOW_MS);
    await digestOnce();
    await sleep(RACY_WINDOW_MS);
    await digestOnce();
    gitListed = 0;
    // Interleaved, so that the machine's drift touches reference and subject alike.
    const lsTimes: number[] = [];
    const statusTimes: number[] = [];
    const cleanTimes: number[] = [];
    for (let i = 0; i < 15; i += 1) {
      lsTimes.push(timeCommand('git', ['ls-tree', '-r', 'HEAD'], { cwd: dir }));
      statusTimes.push(timeCommand('git', ['status', '--porcelain'], { cwd: dir }));
      cleanTimes.push(await digestOnce());
    }
    const cleanListed = gitListed;
    writeFileSync(join(dir, 'pkg0', 'mod0', 'file0.py'), 'changed\n');
    writeFileSync(join(dir, 'new_module.py'), 'new\n');
    const dirtyTimes: number[] = [];
    for (let i = 0; i < 15; i += 1) dirtyTimes.push(await digestOnce());
    // Every file's stat changed: nothing in the stat cache holds, every file is read.
    const coldTimes: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const now = new Date();
      for (const file of listed) utimesSync(file, now, now);
      coldTimes.push(await digestOnce());
    }
    const [lsTree, gitStatus, digest, dirty, cold] = [
      lsTimes,
      statusTimes,
      cleanTimes,
      dirtyTimes,
      coldTimes,
    ].map(median) as [number, number, number, number, number];
    console.log(`\n## Code digest of a ${files}-file repository`);
    console.log(
      `git ls-tree -r HEAD (reference)   ${ms(lsTree)}   a git process started from node, as spawnSync does (git status alone: ${ms(gitStatus)})`,
    );
    console.log(
      `code digest, clean tree           ${ms(digest)}   ${(digest / lsTree).toFixed(2)}× ls-tree (target ≤ 2×)   in-process: lstat of every file and of the directories git walks; git started for ${cleanListed} of ${cleanTimes.length}`,
    );
    console.log(`code digest, 1 modified 1 new     ${ms(dirty)}   ${(dirty / lsTree).toFixed(2)}× ls-tree`);
    console.log(
      `code digest, every file touched   ${ms(cold)}   ${(cold / lsTree).toFixed(2)}× ls-tree (stat cache cold: all read)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** How long computing each example stage's cache key takes (deps hashed, code digest, key). */
export async function benchCacheKeys(): Promise<void> {
  const dir = makeExampleRepo();
  try {
    timeCommand(process.execPath, [cli, 'run'], { cwd: dir });
    const { pipeline } = validatePipeline(readFileSync(join(dir, 'fluksio.yml'), 'utf8'), {
      pipelineDir: '',
    });
    if (!pipeline) throw new Error('the example pipeline does not validate');
    const params = resolveParams(pipeline.params, []).grid[0] ?? {};
    const codeIndex = await readCodeIndex(dir);
    const workspace = {
      repoRoot: codeIndex.repoRoot,
      pipelineDir: codeIndex.repoRoot,
      pipelineDirInRepo: '',
    };
    console.log('\n## Cache key per stage (median of 20, key inputs read from disk)');
    for (const stage of Object.keys(pipeline.stages)) {
      const times = await repeat(20, () =>
        stageKeyInputs({
          workspace,
          pipeline,
          stage,
          params,
          codeIndex,
          env: {},
          interpreters: {},
          fingerprint: null,
          produced: new Map(),
          commandPath: process.env.PATH,
        }),
      );
      console.log(`${stage.padEnd(10)} ${ms(median(times))}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A stage that keeps one core busy for a while, on its own seed: no member shares it. */
const BURN = `import sys, hashlib
seed, work = int(sys.argv[1]), int(sys.argv[2])
digest = str(seed).encode()
for _ in range(work):
    digest = hashlib.sha256(digest).digest()
open("out.txt", "w").write(digest.hex() + "\\n")
print(f"::metric name=score::{digest[0]}")
`;

const SWEEP_PIPELINE = `version: 1
params:
  seed: { type: int, default: 0 }
  work: { type: int, default: 2500000 }
stages:
  burn:
    cmd: python3 burn.py \${seed} \${work}
    deps: [burn.py]
    params: [seed, work]
    outs: [out.txt]
    code: false
`;

function makeSweepRepo(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fluksio-bench-sweep-'));
  writeFileSync(join(dir, 'fluksio.yml'), SWEEP_PIPELINE);
  writeFileSync(join(dir, 'burn.py'), BURN);
  writeFileSync(join(dir, '.gitignore'), 'out.txt\n');
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '-A');
  git(dir, '-c', 'user.name=bench', '-c', 'user.email=bench@fluksio.invalid', 'commit', '-qm', 'sweep');
  return dir;
}

/**
 * A 4-member local sweep of CPU-bound, independent stages (`seed=1,2,3,4`, nothing shared,
 * `--no-cache` so every member executes) with `-j 2` against the same sweep with `-j 1`,
 * alternated so the machine's drift touches both; target ≥ 1.7× on 2 cores. Twice: stages
 * of about 1 s of CPU, where each member's fixed cost (a process and a scratch checkout,
 * the interpreter's start) is a large share, and of about 4 s, closer to a real stage.
 */
export async function benchSweep(rounds = 2): Promise<void> {
  const dir = makeSweepRepo();
  try {
    const sweep = (jobs: string, work: number) =>
      timeCommand(process.execPath, [cli, 'run', 'seed=1,2,3,4', `work=${work}`, '--no-cache', '-j', jobs], {
        cwd: dir,
      });
    // One warm-up: the store exists and python's files are in the page cache for both.
    sweep('1', 250_000);
    console.log(
      '\n## A local sweep of 4 CPU-bound members (`fluksio run seed=1,2,3,4 --no-cache`), wall time',
    );
    for (const [label, work] of [
      ['~1 s', 2_500_000],
      ['~4 s', 10_000_000],
    ] as const) {
      const serial: number[] = [];
      const parallel: number[] = [];
      for (let i = 0; i < rounds; i += 1) {
        serial.push(sweep('1', work));
        parallel.push(sweep('2', work));
      }
      const [one, two] = [median(serial), median(parallel)];
      console.log(`stages of ${label} of CPU each (work=${work})`);
      console.log(`  -j 1 (reference), median of ${rounds}   ${ms(one)}`);
      console.log(
        `  -j 2, median of ${rounds}               ${ms(two)}   ${(one / two).toFixed(2)}× faster (target ≥ 1.7× on 2 cores: ${one / two >= 1.7 ? 'met' : 'missed'})`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
