import { existsSync } from 'node:fs';
import { readFile, symlink, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { TestRepo } from '../helpers/make-repo.js';
import { makeMlProject } from '../helpers/ml-project.js';
import { runCli, runJson } from '../helpers/run-cli.js';

let repo: TestRepo;
let pipeline: string;
let firstRunId: string;
const env = { DEVICE: 'cpu' };

beforeAll(async () => {
  repo = await makeMlProject();
  pipeline = await readFile(join(repo.dir, 'fluksio.yml'), 'utf8');
  const first = await runJson([], { cwd: repo.dir, env });
  expect(first.code).toBe(0);
  firstRunId = first.report.run.id;
});
afterAll(async () => {
  await repo.cleanup();
});

/** Runs with a pipeline text, expects exit 2, and checks nothing reached the store. */
async function refused(args: string[], text = pipeline): Promise<string> {
  await repo.write('fluksio.yml', text);
  try {
    const result = await runCli(['run', ...args], { cwd: repo.dir, env });
    expect(result.code, result.stdout + result.stderr).toBe(2);
    expect(result.stdout).toBe('');
    const runs = await runCli(['runs', '--json'], { cwd: repo.dir, env });
    expect((JSON.parse(runs.stdout) as { id: string }[]).map((run) => run.id)).toEqual([firstRunId]);
    return result.stderr;
  } finally {
    await repo.write('fluksio.yml', pipeline);
  }
}

describe('bad input exits 2, names every problem with its place, and writes nothing', () => {
  test.each([
    [['lr=fast'], `Parameter 'lr': "fast" is not a float (e.g. lr=0.01)`],
    [['nosuch=1'], "Unknown parameter 'nosuch'; the pipeline declares: lr, epochs, seed, note"],
    [['seed=9007199254740993'], `Parameter 'seed': "9007199254740993" is beyond ±9007199254740991`],
    [['lr'], '"lr" is a parameter: set it with lr=VALUE'],
    [['lr:0.1'], '"lr:0.1" is a parameter written with ":": write lr=0.1'],
    [['--jobs', '0'], '--jobs: "0" is not a whole number ≥ 1'],
  ])('%j', async (args, message) => {
    expect(await refused(args)).toContain(message);
  });

  test('several bad params are all named at once', async () => {
    const stderr = await refused(['lr=fast', 'nosuch=1', 'epochs=0']);
    expect(stderr.trim().split('\n')).toHaveLength(3);
  });

  test.each([
    [
      'a YAML syntax error',
      (text: string) => text.replace('stages:', 'stages: [\n'),
      /fluksio\.yml:\d+: YAML syntax error/,
    ],
    [
      'a cycle',
      (text: string) => text.replace('deps: [prepare.py, raw.csv]', 'deps: [prepare.py, raw.csv, model.txt]'),
      /fluksio\.yml:\d+: stages\.\w+: the stages form a cycle: .*→/,
    ],
    [
      'an unknown dep',
      (text: string) =>
        text.replace(
          'deps: [evaluate.py, model.txt, shared.py]',
          'deps: [evaluate.py, model.bin, shared.py]',
        ),
      /fluksio\.yml:\d+: stages\.evaluate\.deps\[1\]: "model\.bin" is neither in the repository nor an output of any stage/,
    ],
    [
      'a duplicate out',
      (text: string) => text.replace('outs: [model.txt]', 'outs: [data/clean.csv]'),
      /stages\.train\.outs\[0\]: "data\/clean\.csv" is already an output of stage prepare/,
    ],
    [
      'an out outside the repository',
      (text: string) => text.replace('outs: [model.txt]', 'outs: [../x]'),
      /stages\.train\.outs\[0\]: "\.\.\/x" is outside the repository/,
    ],
    [
      'an unknown key',
      (text: string) => text.replace('    code: false\n', '    code: false\n    dep: [x]\n'),
      /stages\.prepare: unknown key "dep"/,
    ],
  ])('%s', async (_name, edit, message) => {
    expect(await refused([], edit(pipeline))).toMatch(message);
  });

  test('a broken pipeline reports every problem, each on its own line', async () => {
    const broken = pipeline
      .replace('outs: [model.txt]', 'outs: [../x]')
      .replace('deps: [evaluate.py, model.txt, shared.py]', 'deps: [evaluate.py, model.bin, shared.py]');
    const stderr = await refused([], broken);
    expect(stderr).toMatch(/outs\[0\]/);
    expect(stderr).toMatch(/deps\[1\]/);
  });

  test('an out that leads outside the repository through a symlink', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'fluksio-outside-'));
    try {
      await symlink(outside, join(repo.dir, 'escape'));
      const stderr = await refused([], pipeline.replace('outs: [model.txt]', 'outs: [escape/model.txt]'));
      expect(stderr).toMatch(/stages\.train\.outs\[0\]: .*symlink/);
      expect(existsSync(join(outside, 'model.txt'))).toBe(false);
    } finally {
      await rm(join(repo.dir, 'escape'), { force: true });
      await rm(outside, { recursive: true, force: true });
    }
  });

  test('a pipeline that does not exist', async () => {
    const result = await runCli(['run', '--pipeline', 'nope/fluksio.yml'], { cwd: repo.dir, env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--pipeline: nope/fluksio.yml does not exist');
  });

  test('a folder that is not a git repository', async () => {
    const bare = await mkdtemp(join(tmpdir(), 'fluksio-nogit-'));
    try {
      const { writeFile } = await import('node:fs/promises');
      await writeFile(join(bare, 'fluksio.yml'), pipeline);
      const result = await runCli(['run'], { cwd: bare, env });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/is not inside a git repository/);
      expect(existsSync(join(bare, '.fluksio'))).toBe(false);
    } finally {
      await rm(bare, { recursive: true, force: true });
    }
  });

  test('an unknown option is a usage error with help', async () => {
    const result = await runCli(['run', '--frobnicate'], { cwd: repo.dir, env });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/unknown option '--frobnicate'/);
  });

  test('every command has --help: each that fluksio --help lists, and each of their subcommands', async () => {
    /** The commands a help text lists under "Commands:", without commander's own `help`. */
    const listed = (help: string) =>
      [...(help.split(/^Commands:$/m)[1] ?? '').matchAll(/^ {2}([a-z][\w-]*)/gm)]
        .map((match) => match[1] ?? '')
        .filter((name) => name !== 'help');
    const top = await runCli(['--help'], { cwd: repo.dir, env });
    expect(top.code).toBe(0);
    const commands = listed(top.stdout).map((name) => [name]);
    expect(commands.length).toBeGreaterThan(15);
    const seen: string[] = [];
    while (commands.length > 0) {
      const command = commands.shift() ?? [];
      const result = await runCli([...command, '--help'], { cwd: repo.dir, env });
      expect(result.code, `${command.join(' ')}: ${result.stderr}`).toBe(0);
      expect(result.stdout).toMatch(new RegExp(`^Usage: fluksio ${command.join(' ')} `));
      // A command that only groups others (token) has its description; every command does.
      expect(result.stdout.split('\n')[2]?.trim(), command.join(' ')).not.toBe('');
      commands.push(...listed(result.stdout).map((name) => [...command, name]));
      seen.push(command.join(' '));
    }
    expect(seen).toEqual(expect.arrayContaining(['run', 'submit', 'pull', 'runner add', 'token revoke']));
  });
});
