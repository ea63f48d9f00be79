import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { runnerCommand, type RunnerCommandOptions } from '../../cli/commands/runner-command.js';
import { UsageError } from '../../present/terminal/usage-error.js';
import { FakeControlPlane } from './helpers/fake-control-plane.js';
import { startRunner, type RunnerProcess } from './helpers/runner-process.js';

let dir: string;
const runners: RunnerProcess[] = [];
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'fluksio-runner-command-'));
});
afterEach(async () => {
  await Promise.all(runners.splice(0).map((runner) => runner.stop('SIGKILL')));
  await rm(dir, { recursive: true, force: true });
});

function io(env: Record<string, string>): CliIo {
  const sink = new Writable({ write: (_chunk, _encoding, callback) => callback() });
  return { stdout: sink, stderr: sink, cwd: dir, env };
}

const refuses = (options: RunnerCommandOptions, env: Record<string, string>, message: RegExp) =>
  expect(runnerCommand(options, io(env))).rejects.toThrow(
    expect.objectContaining({ name: UsageError.name, message: expect.stringMatching(message) }),
  );

describe('fluksio runner: configuration', () => {
  test('without a URL or a token it says where they come from (exit 2)', async () => {
    await refuses(
      {},
      { FLUKSIO_RUNNER_TOKEN: 'x' },
      /No control plane URL: give --url URL or set FLUKSIO_URL/,
    );
    await refuses(
      { url: 'http://127.0.0.1:1' },
      {},
      /No runner token: set FLUKSIO_RUNNER_TOKEN or give --token-file FILE/,
    );
    await refuses(
      { url: 'http://user:pw@example.com' },
      { FLUKSIO_RUNNER_TOKEN: 'x' },
      /without credentials/,
    );
    await refuses(
      { url: 'http://127.0.0.1:1', concurrency: 'two' },
      { FLUKSIO_RUNNER_TOKEN: 'x' },
      /--concurrency: "two"/,
    );
  });

  test('a --work-dir that is a file, not a folder, is refused naming it (exit 2), not "EEXIST: mkdir"', async () => {
    await writeFile(path.join(dir, 'work'), '');
    await refuses(
      { url: 'http://127.0.0.1:1', workDir: 'work' },
      { FLUKSIO_RUNNER_TOKEN: 'x' },
      /--work-dir: .*work is a file, not a folder/,
    );
  });

  test('a token file must hold the token alone; an env file may not set FLUKSIO_* names', async () => {
    await writeFile(path.join(dir, 'token'), 'two words\n');
    await refuses(
      { url: 'http://127.0.0.1:1', tokenFile: 'token' },
      {},
      /--token-file: token must hold the runner token alone/,
    );
    await refuses(
      { url: 'http://127.0.0.1:1', tokenFile: 'missing' },
      {},
      /--token-file: cannot read missing \(ENOENT\)/,
    );
    await writeFile(path.join(dir, 'secrets.env'), 'HF_TOKEN=x\nFLUKSIO_URL=y\n');
    await refuses(
      { url: 'http://127.0.0.1:1', envFile: 'secrets.env' },
      { FLUKSIO_RUNNER_TOKEN: 'x' },
      /--env-file: FLUKSIO_URL in .*secrets\.env: FLUKSIO_\* names are reserved/,
    );
  });

  test('a token the control plane refuses stops the runner (exit 1) without printing the token', async () => {
    const plane = new FakeControlPlane();
    await plane.start();
    try {
      await writeFile(path.join(dir, 'token'), 'wrong-token-4f2a9c\n');
      const runner = startRunner(
        { workDir: path.join(dir, 'work'), tokenFile: path.join(dir, 'token'), url: plane.url },
        {},
      );
      runners.push(runner);
      expect(await runner.exited).toBe(1);
      expect(runner.output()).toMatch(/refused the runner token/);
      expect(runner.output()).not.toContain('wrong-token-4f2a9c');
    } finally {
      await plane.stop();
    }
  });

  test('two runners never share a work directory', async () => {
    const plane = new FakeControlPlane();
    await plane.start();
    try {
      const env = { FLUKSIO_URL: plane.url, FLUKSIO_RUNNER_TOKEN: plane.token };
      const first = startRunner({ workDir: path.join(dir, 'work') }, env);
      runners.push(first);
      await waitFor(() => first.output().includes('runner started'));
      const second = startRunner({ workDir: path.join(dir, 'work') }, env);
      runners.push(second);
      expect(await second.exited).toBe(1);
      expect(second.output()).toMatch(
        new RegExp(
          `Another runner \\(pid ${first.child.pid}\\) is using the work directory .*work; give this one its own with --work-dir`,
        ),
      );
    } finally {
      await plane.stop();
    }
  });

  test('a runner killed with SIGKILL leaves no lock behind: the next starts at once, a third is refused naming it', async () => {
    const plane = new FakeControlPlane();
    await plane.start();
    try {
      const env = { FLUKSIO_URL: plane.url, FLUKSIO_RUNNER_TOKEN: plane.token };
      const workDir = path.join(dir, 'work');
      const killed = startRunner({ workDir }, env);
      runners.push(killed);
      await waitFor(() => killed.output().includes('runner started'));
      expect((await readFile(path.join(workDir, 'runner.pid'), 'utf8')).trim()).toBe(
        String(killed.child.pid),
      );
      await killed.stop('SIGKILL');

      const next = startRunner({ workDir }, env);
      runners.push(next);
      await waitFor(() => next.output().includes('runner started') || next.child.exitCode !== null);
      expect(next.output()).not.toMatch(/Another runner/);
      expect(next.child.exitCode).toBeNull();
      expect((await readFile(path.join(workDir, 'runner.pid'), 'utf8')).trim()).toBe(String(next.child.pid));

      const third = startRunner({ workDir }, env);
      runners.push(third);
      expect(await third.exited).toBe(1);
      expect(third.output()).toContain(`Another runner (pid ${next.child.pid}) is using the work directory`);
    } finally {
      await plane.stop();
    }
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
