import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { runFluksio } from '../helpers/fluksio-process.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';

// A script reads `fluksio … --json` with jq: when the command fails, it must still get one
// JSON object on stdout saying what went wrong, with the same exit code, while the person
// beside it still reads the sentence on stderr.

vi.setConfig({ testTimeout: 120_000 });

const PIPELINE = `version: 1
params:
  lr: { type: float, default: 0.1 }
stages:
  train:
    cmd: echo \${lr}
    params: [lr]
`;
const BROKEN = `version: 1
stages:
  train:
    cmd: 3
    outs: 5
`;

let repo: TestRepo;
let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'fluksio-home-'));
});
afterEach(async () => {
  await repo?.cleanup();
  await rm(home, { recursive: true, force: true });
});
const env = () => ({ HOME: home, XDG_CACHE_HOME: join(home, '.cache') });

interface JsonError {
  error: { message: string; exitCode: number; problems?: { path: string; message: string; line?: number }[] };
}

async function failing(args: string[]): Promise<{ code: number; error: JsonError['error']; stderr: string }> {
  const result = await runFluksio(args, { cwd: repo.dir, env: env() });
  let parsed: JsonError;
  try {
    parsed = JSON.parse(result.stdout) as JsonError;
  } catch {
    throw new Error(
      `fluksio ${args.join(' ')} printed no JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`,
    );
  }
  expect(Object.keys(parsed)).toEqual(['error']);
  expect(parsed.error.exitCode).toBe(result.code);
  return { code: result.code, error: parsed.error, stderr: result.stderr };
}

test.each([
  { args: ['show', '01NOPE', '--json'], says: /No run matches "01NOPE"/ },
  { args: ['runs', '--json', '--limit', 'x'], says: /--limit: "x" is not a whole number/ },
  { args: ['diff', 'no-such-thing', '--json'], says: /"no-such-thing" is neither a run/ },
  { args: ['run', '--json', '--bogus'], says: /unknown option '--bogus'/ },
  { args: ['status', 'evaluate', '--json'], says: /No stage named "evaluate"/ },
  { args: ['run', 'lr=fast', '--json'], says: /lr/ },
])(
  'fluksio $args fails with an error object on stdout, the sentence on stderr, exit 2',
  async ({ args, says }) => {
    repo = await makeRepo({ files: { 'fluksio.yml': PIPELINE } });
    const made = await runFluksio(['run'], { cwd: repo.dir, env: env() });
    expect(made.code, made.stderr).toBe(0);

    const { code, error, stderr } = await failing(args);
    expect(code).toBe(2);
    expect(error.message).toMatch(says);
    expect(stderr).toMatch(says);
  },
);

test('an invalid fluksio.yml is an error object listing every problem, with its path and line', async () => {
  repo = await makeRepo({ files: { 'fluksio.yml': BROKEN } });
  for (const command of ['run', 'status']) {
    const { code, error, stderr } = await failing([command, '--json']);
    expect(code).toBe(2);
    expect(stderr).toContain('stages.train.cmd');
    expect(error.problems).toEqual([
      expect.objectContaining({
        path: 'stages.train.cmd',
        line: 4,
        message: expect.stringMatching(/string/),
      }),
      expect.objectContaining({ path: 'stages.train.outs', line: 5, message: expect.stringMatching(/list/) }),
    ]);
  }
});

test('without --json a failure prints nothing on stdout', async () => {
  repo = await makeRepo({ files: { 'fluksio.yml': PIPELINE } });
  const result = await runFluksio(['show', '01NOPE'], { cwd: repo.dir, env: env() });
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(/No runs yet|No run matches/);
});
