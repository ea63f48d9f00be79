import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { spawnFluksio } from '../helpers/fluksio-process.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runJson } from '../helpers/run-cli.js';

let repo: TestRepo;
/** Outside the repository: where the stage says where it ran, and the flag that makes it wait. */
let outside: string;
beforeEach(async () => {
  outside = await mkdtemp(join(tmpdir(), 'fluksio-verify-outside-'));
});
afterEach(async () => {
  await repo?.cleanup();
  await rm(outside, { recursive: true, force: true });
});

/**
 * A stage that runs at once, except while the flag file exists: then it records the
 * scratch work tree it runs in and waits to be interrupted. The flag is no input of its
 * key, so `verify` re-executes the entry the quick run made.
 */
function slowWhenFlagged(): string {
  return `version: 1
stages:
  slow:
    cmd: if [ -e ${outside}/flag ]; then pwd > ${outside}/where; sleep 600; fi; echo ok > out.txt
    outs: [out.txt]
`;
}

async function cachedRun(): Promise<string> {
  repo = await makeRepo({ files: { 'fluksio.yml': slowWhenFlagged(), '.gitignore': 'out.txt\n' } });
  const run = await runJson([], { cwd: repo.dir });
  expect(run.report.run.status).toBe('succeeded');
  await writeFile(join(outside, 'flag'), '');
  return run.report.run.id;
}

/** Resolves once the stage has recorded where it runs. */
async function scratchWhereStageRuns(): Promise<string> {
  const where = join(outside, 'where');
  for (;;) {
    const text = await readFile(where, 'utf8').catch(() => '');
    if (text.endsWith('\n')) return text.trim();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('Ctrl-C in the middle of verify stops the stage and leaves no scratch work tree behind', async () => {
  const runId = await cachedRun();
  const verify = spawnFluksio(['verify', runId], { cwd: repo.dir });
  const scratch = await scratchWhereStageRuns();
  expect(existsSync(scratch)).toBe(true);
  // Cancelled, it ends killed by SIGINT as Ctrl-C'd programs do (a shell says 130).
  expect(await verify.stop('SIGINT')).toBe('SIGINT');
  expect(verify.output()).toContain('cancelled');
  expect(existsSync(scratch)).toBe(false);
  expect((await repo.git('worktree', 'list')).trim().split('\n')).toHaveLength(1);
}, 120_000);

test('a second Ctrl-C exits at once, and still leaves no scratch work tree behind', async () => {
  const runId = await cachedRun();
  const verify = spawnFluksio(['verify', runId], { cwd: repo.dir });
  const scratch = await scratchWhereStageRuns();
  verify.child.kill('SIGINT');
  await verify.waitFor(/again to exit at once/);
  expect(await verify.stop('SIGINT')).toBe('SIGINT');
  expect(existsSync(scratch)).toBe(false);
  expect((await repo.git('worktree', 'list')).trim().split('\n')).toHaveLength(1);
}, 120_000);

test('hooks the repository installs do not run when verify checks the commit out', async () => {
  const marker = join(outside, 'hook-ran');
  const hook = `#!/bin/sh\ntouch ${marker}\n`;
  repo = await makeRepo({
    files: {
      'fluksio.yml': 'version: 1\nstages:\n  quick:\n    cmd: echo ok > out.txt\n    outs: [out.txt]\n',
      '.gitignore': 'out.txt\n',
      '.githooks/post-checkout': hook,
    },
  });
  // As husky and pre-commit set them up: committed hooks, and one in .git/hooks.
  await repo.git('update-index', '--chmod=+x', '.githooks/post-checkout');
  await repo.commitAll('hooks executable');
  await writeFile(join(repo.dir, '.git', 'hooks', 'post-checkout'), hook, { mode: 0o755 });
  const run = await runJson([], { cwd: repo.dir });
  for (const hooksPath of [null, '.githooks']) {
    if (hooksPath) await repo.git('config', 'core.hooksPath', hooksPath);
    const verify = spawnFluksio(['verify', run.report.run.id], { cwd: repo.dir });
    expect(await verify.exited, verify.output()).toBe(0);
    expect(verify.output()).toContain('deterministic');
    expect(existsSync(marker)).toBe(false);
  }
}, 120_000);
