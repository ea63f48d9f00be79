import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runJson } from '../helpers/run-cli.js';

let repo: TestRepo;
afterEach(async () => {
  await repo?.cleanup();
});

test.each([`$(touch PWNED)`, `'; touch PWNED #`, '`touch PWNED`', '"; touch PWNED; echo "'])(
  'a string param %j arrives as a literal value and nothing in it runs',
  async (value) => {
    repo = await makeRepo({
      files: {
        'fluksio.yml': `version: 1
params:
  note: { type: string, default: "" }
stages:
  echo:
    cmd: printf '%s' \${note} > note.txt
    params: [note]
    outs: [note.txt]
`,
        '.gitignore': 'note.txt\n',
      },
    });
    await rm(join(repo.dir, 'PWNED'), { force: true });
    const { code, report } = await runJson([`note=${value}`], { cwd: repo.dir });
    expect(code).toBe(0);
    expect(report.run.params.note).toBe(value);
    expect(await readFile(join(repo.dir, 'note.txt'), 'utf8')).toBe(value);
    expect(existsSync(join(repo.dir, 'PWNED'))).toBe(false);
  },
);
