import { cpSync, mkdtempSync, rmSync, utimesSync, writeFileSync, mkdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readCodeIndex } from '../runner/code-index.js';
import { codeDigest } from '../runner/code-digest.js';
import { RACY_WINDOW_MS } from '../runner/stat-cache.js';
import { stageKeyInputs } from '../runner/stage-key-inputs.js';
import { validatePipeline } from '../schemas/validate-pipeline.js';
import { resolveParams } from '../schemas/resolve-params.js';
import { readFileSync } from 'node:fs';
import { median, ms, repeat, timeCommand } from './measure.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(root, 'bin', 'fluksio.js');
const gitEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: '1' };

function git(dir: string, ...args: string[]): void {
  timeCommand('git', args, { cwd: dir, env: gitEnv });
}

function makeExampleRepo(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fluksio-bench-example-'));
  cpSync(join(root, 'examples', 'logreg'), dir, {
    recursive: true,
    filter: (source) => !/[\\/](\.fluksio|data|metrics|model\.json|__pycache__)$/.test(source),
  });
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, '-c', 'user.name=bench', '-c', 'user.email=bench@fluksio.invalid', 'add', '-A');
  git(dir, '-c', 'user.name=bench', '-c', 'user.email=bench@fluksio.invalid', 'commit', '-qm', 'example');
  return dir;
}

/** The example pipeline: uncached and fully cached `fluksio run`, with `git status` for scale. */
export async function benchExample(): Promise<void> {
  const dir = makeExampleRepo();
  try {
    const run = (...args: string[]) => timeCommand(process.execPath, [cli, 'run', ...args], { cwd: dir });
    const first = run();
    const uncached = median([run('--no-cache'), run('--no-cache'), run('--no-cache')]);
    const cached = median([run(), run(), run(), run(), run()]);
    const gitStatus = median(
      [1, 2, 3, 4, 5].map(() => timeCommand('git', ['status', '--porcelain'], { cwd: dir })),
    );
    const nodeStart = median([1, 2, 3].map(() => timeCommand(process.execPath, ['-e', '0'])));
    console.log('\n## The example pipeline (examples/logreg, 3 stages), `fluksio run` wall time');
    console.log(`first run (creates .fluksio/)   ${ms(first)}`);
    console.log(`uncached (--no-cache), median  ${ms(uncached)}`);
    console.log(`fully cached, median of 5      ${ms(cached)}   (target: under 1 s)`);
    console.log(`cached / uncached              ${(cached / uncached).toFixed(2)}×`);
    console.log(`for scale: git status          ${ms(gitStatus)}   node -e 0  ${ms(nodeStart)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
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
    const digestOnce = async () => {
      const started = performance.now();
      codeDigest(await readCodeIndex(dir), { pipelineDir: '', include: null, exclude: [] });
      return performance.now() - started;
    };
    // A tree nobody is editing: files changed within the stat cache's racy window are
    // read again on every digest, as they must be. One digest then fills the cache.
    await sleep(RACY_WINDOW_MS);
    await digestOnce();
    // Interleaved, so that the machine's drift touches reference and subject alike.
    const lsTimes: number[] = [];
    const statusTimes: number[] = [];
    const cleanTimes: number[] = [];
    for (let i = 0; i < 15; i += 1) {
      lsTimes.push(timeCommand('git', ['ls-tree', '-r', 'HEAD'], { cwd: dir }));
      statusTimes.push(timeCommand('git', ['status', '--porcelain'], { cwd: dir }));
      cleanTimes.push(await digestOnce());
    }
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
    console.log(`git ls-tree -r HEAD (reference)   ${ms(lsTree)}   (git status alone: ${ms(gitStatus)})`);
    console.log(
      `code digest, clean tree           ${ms(digest)}   ${(digest / lsTree).toFixed(2)}× ls-tree (target ≤ 2×)`,
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
          fingerprint: null,
          produced: new Map(),
        }),
      );
      console.log(`${stage.padEnd(10)} ${ms(median(times))}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
