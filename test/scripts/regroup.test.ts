// regroup-ignore-file: its relative paths are the contents of scratch trees, not its imports.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { applyRegroup, destinationOf, planRegroup, RULES } from '../../scripts/regroup.mjs';

const SCRIPT = join(import.meta.dirname, '..', '..', 'scripts', 'regroup.mjs');

/** A rule table of the real shape over a tree small enough to read in a test. */
const TEST_RULES = [
  { to: 'store/runs', globs: ['store/*run*.ts'] },
  { to: 'core', globs: ['schemas/{format,paths}.ts'] },
];

let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'fluksio-regroup-'));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function write(files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
}

const read = (path: string) => readFile(join(root, path), 'utf8');

async function regroup(): Promise<{ moved: number; rewritten: number }> {
  const plan = await planRegroup(root, TEST_RULES);
  await applyRegroup(root, plan, { format: false });
  return { moved: plan.moves.size, rewritten: plan.rewrites.size };
}

describe('scripts/regroup.mjs', () => {
  test('moves what a rule matches and rewrites every import of it, and of its own', async () => {
    await write({
      'schemas/format.ts': "import { Pipeline } from './pipeline.js';\nexport const f = Pipeline;\n",
      'schemas/pipeline.ts': 'export const Pipeline = 1;\n',
      'store/find-run.ts':
        "import { f } from '../schemas/format.js';\nconst sql = new URL('../drizzle/0000.sql', import.meta.url);\nexport { f, sql };\n",
      'store/database.ts': 'export const db = 1;\n',
      'app/route.ts':
        "import { findRun } from '../store/find-run.js';\nexport const r = () => import('../store/find-run');\n",
      'test/store/find-run.test.ts':
        "import { f } from '../../store/find-run.js';\nimport '../../store/database.js';\n",
      'drizzle/0000.sql': 'select 1;\n',
      'schemas/paths.ts': "export const outside = (path: string) => path.startsWith('../');\n",
      'test/fixture-text.ts':
        '// regroup-ignore-file\nexport const text = "from \'../store/find-run.js\'";\n',
    });

    expect(await regroup()).toEqual({ moved: 3, rewritten: 4 });

    expect(existsSync(join(root, 'store/find-run.ts'))).toBe(false);
    expect(await read('core/format.ts')).toContain("from '../schemas/pipeline.js'");
    const findRun = await read('store/runs/find-run.ts');
    expect(findRun).toContain("from '../../core/format.js'");
    expect(findRun).toContain("new URL('../../drizzle/0000.sql', import.meta.url)");
    expect(await read('app/route.ts')).toBe(
      "import { findRun } from '../store/runs/find-run.js';\nexport const r = () => import('../store/runs/find-run');\n",
    );
    expect(await read('test/store/find-run.test.ts')).toBe(
      "import { f } from '../../store/runs/find-run.js';\nimport '../../store/database.js';\n",
    );
    expect(await read('store/database.ts')).toBe('export const db = 1;\n');
    // A string naming a folder is no import.
    expect(await read('core/paths.ts')).toContain("path.startsWith('../')");
    expect(await read('test/fixture-text.ts')).toContain("from '../store/find-run.js'");

    // A second run finds nothing to do.
    expect(await regroup()).toEqual({ moved: 0, rewritten: 0 });
  });

  test('after a merge, moves the files a branch added in an old folder and mends its imports', async () => {
    await write({
      'store/find-run.ts': 'export const findRun = 1;\n',
      'app/route.ts': "import { findRun } from '../store/find-run.js';\n",
    });
    await regroup();
    // What a branch written against the old layout brings: a file in the old folder, and
    // an import of a file that has moved.
    await write({
      'store/list-runs.ts': "import { findRun } from './find-run.js';\nexport const listRuns = findRun;\n",
      'app/other-route.ts':
        "import { findRun } from '../store/find-run.js';\nimport { listRuns } from '../store/list-runs.js';\n",
    });

    expect(await regroup()).toEqual({ moved: 1, rewritten: 1 });
    expect(await read('store/runs/list-runs.ts')).toContain("from './find-run.js'");
    expect(await read('app/other-route.ts')).toBe(
      "import { findRun } from '../store/runs/find-run.js';\nimport { listRuns } from '../store/runs/list-runs.js';\n",
    );
  });

  test('a file moved by hand gets its importers mended by its unique name', async () => {
    await write({
      'app/github/intake/webhook-payloads.ts':
        "import { x } from '../../../schemas/x.js';\nexport const p = x;\n",
      'schemas/x.ts': 'export const x = 1;\n',
      'app/github/triggers/is-fork.ts': "import { p } from '../intake/webhook-payloads.js';\n",
      'test/paths.test.ts': "export const refused = ['../x', '../', '../../etc/passwd', './index'];\n",
      'schemas/index.ts': 'export {};\n',
    });
    // The hand move: the file goes where no rule would have put it.
    await write({ 'app/github/webhook-payloads.ts': await read('app/github/intake/webhook-payloads.ts') });
    await rm(join(root, 'app/github/intake'), { recursive: true });

    expect(await regroup()).toEqual({ moved: 0, rewritten: 2 });
    expect(await read('app/github/triggers/is-fork.ts')).toContain("from '../webhook-payloads.js'");
    expect(await read('app/github/webhook-payloads.ts')).toContain("from '../../schemas/x.js'");
    // Strings that name no source file are data, even when a product file has that name.
    expect(await read('test/paths.test.ts')).toBe(
      "export const refused = ['../x', '../', '../../etc/passwd', './index'];\n",
    );
  });

  test('--check changes nothing and fails while something would move', async () => {
    await write({ 'store/find-run.ts': 'export const findRun = 1;\n' });
    const check = promisify(execFile)(process.execPath, [SCRIPT, '--check', '--root', root]);
    await expect(check).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('1 file(s) to move'),
    });
    expect(existsSync(join(root, 'store/find-run.ts'))).toBe(true);
  });

  test('--check fails on a file at the top of store/ that no rule places', async () => {
    await write({ 'store/odd-thing.ts': 'export const odd = 1;\n' });
    const check = promisify(execFile)(process.execPath, [SCRIPT, '--check', '--root', root]);
    await expect(check).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('no rule places store/odd-thing.ts'),
    });
  });

  test('the real table places files by aggregate, and a placed file matches no rule again', () => {
    const moved: [string, string][] = [
      ['store/find-run.ts', 'store/runs/find-run.ts'],
      ['store/runner-may-take.ts', 'store/leases/runner-may-take.ts'],
      ['store/create-runner.ts', 'store/runners/create-runner.ts'],
      ['store/record-delivery.ts', 'store/deliveries/record-delivery.ts'],
      ['schemas/traceback.ts', 'core/traceback.ts'],
      ['app/github/render-check-run.ts', 'app/github/render/render-check-run.ts'],
      ['runner/masker.ts', 'runner/output/masker.ts'],
    ];
    for (const [from, to] of moved) {
      expect(destinationOf(from)).toBe(to);
      expect(destinationOf(to)).toBeNull();
    }
    expect(destinationOf('schemas/pipeline.ts')).toBeNull();
    expect(RULES.flatMap((rule) => rule.globs).every((glob) => !glob.includes('**'))).toBe(true);
  });
});
