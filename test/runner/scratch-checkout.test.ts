import { existsSync } from 'node:fs';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { createScratchCheckout } from '../../runner/workspace/scratch-checkout.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';

let repo: TestRepo;
afterEach(async () => {
  await repo?.cleanup();
});

test('checks out the commit apart from the work tree, runs no hook, resets and leaves no trace', async () => {
  repo = await makeRepo({ files: { 'a.txt': 'first\n', '.gitignore': '/out/\n' } });
  const first = await repo.commitAll('first');
  await repo.write('a.txt', 'second\n');
  await repo.commitAll('second');
  await repo.write('a.txt', 'uncommitted\n');
  const marker = join(repo.dir, 'hook-ran');
  const hook = join(repo.dir, '.git', 'hooks', 'post-checkout');
  await writeFile(hook, `#!/bin/sh\ntouch '${marker}'\n`);
  await chmod(hook, 0o755);

  const scratch = await createScratchCheckout(repo.dir, first);
  try {
    expect(await readFile(join(scratch.root, 'a.txt'), 'utf8')).toBe('first\n');
    expect(existsSync(marker)).toBe(false);
    await writeFile(join(scratch.root, 'a.txt'), 'changed by a stage\n');
    await writeFile(join(scratch.root, 'stray.txt'), 'undeclared\n');
    await writeFile(join(scratch.root, '.gitignore'), '/out/\n/extra/\n');
    await scratch.reset();
    expect(await readFile(join(scratch.root, 'a.txt'), 'utf8')).toBe('first\n');
    expect(existsSync(join(scratch.root, 'stray.txt'))).toBe(false);
  } finally {
    await scratch.remove();
  }
  expect(existsSync(scratch.root)).toBe(false);
  expect((await repo.git('worktree', 'list')).trim().split('\n')).toHaveLength(1);
  expect(await readFile(join(repo.dir, 'a.txt'), 'utf8')).toBe('uncommitted\n');
});

test('a commit the repository does not have is an error naming it', async () => {
  repo = await makeRepo({ files: { 'a.txt': 'a\n' } });
  const missing = 'f'.repeat(40);
  await expect(createScratchCheckout(repo.dir, missing)).rejects.toThrow(
    `Could not check out commit ${missing} into a scratch work tree`,
  );
  expect((await repo.git('worktree', 'list')).trim().split('\n')).toHaveLength(1);
});
