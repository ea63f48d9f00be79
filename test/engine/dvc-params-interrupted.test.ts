import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { spawnFluksio } from '../helpers/fluksio-process.js';
import { makeRepo } from '../helpers/make-repo.js';
import { runCli, runJson, statuses } from '../helpers/run-cli.js';

const PARAMS = '# defaults\nlr: 0.1 # the step\n';

/** Resolves once `path` exists (a stage's marker), or rejects after `timeoutMs`. */
async function fileAppears(path: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`${path} did not appear within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A DVC project whose one stage reads lr from params.yaml and waits for `release` before it ends. */
function waitingProject(): Record<string, string> {
  return {
    'params.yaml': PARAMS,
    '.gitignore': 'started\nrelease\nlr.txt\n',
    'dvc.yaml': [
      'stages:',
      '  train:',
      '    cmd: cp params.yaml lr.txt && touch started && while [ ! -e release ]; do sleep 0.05; done',
      '    params: [lr]',
      '    outs: [lr.txt]',
      '',
    ].join('\n'),
  };
}

test('a run killed outright while a stage holds its params in params.yaml: the next run puts the file back first', async () => {
  const project = await makeRepo({ files: waitingProject() });
  try {
    const killed = spawnFluksio(['run', 'lr=0.5'], { cwd: project.dir });
    await fileAppears(join(project.dir, 'started'));
    expect(readFileSync(join(project.dir, 'params.yaml'), 'utf8')).toMatch(/lr: 0.5/);
    await killed.stop('SIGKILL');
    // The orphaned stage may end now; the file still holds the killed run's value.
    writeFileSync(join(project.dir, 'release'), '');
    expect(readFileSync(join(project.dir, 'params.yaml'), 'utf8')).toMatch(/lr: 0.5/);

    const next = await runJson([], { cwd: project.dir });
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toMatch(/params\.yaml: put back as it was before an interrupted run/);
    expect(readFileSync(join(project.dir, 'params.yaml'), 'utf8')).toBe(PARAMS);
    // The run saw the committed value, and says the tree is clean.
    expect(readFileSync(join(project.dir, 'lr.txt'), 'utf8')).toBe(PARAMS);
    expect(next.report.run.params).toMatchObject({ lr: 0.1 });
    expect(next.report.run.dirty).toBe(false);
    expect(statuses(next.report)).toEqual({ train: 'ran' });
  } finally {
    writeFileSync(join(project.dir, 'release'), '');
    await project.cleanup();
  }
});

test('a params.yaml edited by its user after an interrupted run is left as the user wrote it', async () => {
  const project = await makeRepo({ files: waitingProject() });
  try {
    const killed = spawnFluksio(['run', 'lr=0.5'], { cwd: project.dir });
    await fileAppears(join(project.dir, 'started'));
    await killed.stop('SIGKILL');
    writeFileSync(join(project.dir, 'release'), '');
    writeFileSync(join(project.dir, 'params.yaml'), 'lr: 0.3\n');

    const next = await runJson([], { cwd: project.dir });
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toMatch(
      /params\.yaml: an interrupted run wrote params into it, and it was edited since; left as it is/,
    );
    expect(readFileSync(join(project.dir, 'params.yaml'), 'utf8')).toBe('lr: 0.3\n');
    expect(next.report.run.params).toMatchObject({ lr: 0.3 });

    // Said once: the journal entry is gone.
    const again = await runCli(['run'], { cwd: project.dir });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toMatch(/interrupted run/);
  } finally {
    writeFileSync(join(project.dir, 'release'), '');
    await project.cleanup();
  }
});

test('a stage that turns params.yaml into a link to a file outside the repository: the next stage’s params are never written there', async () => {
  const outside = mkdtempSync(join(tmpdir(), 'fluksio-outside-'));
  const target = join(outside, 'runner.yaml');
  writeFileSync(target, 'lr: 7\n');
  const project = await makeRepo({
    files: {
      'params.yaml': 'lr: 0.1\n',
      '.gitignore': 'a.txt\nb.txt\n',
      'dvc.yaml': [
        'stages:',
        '  a:',
        `    cmd: ln -sf ${target} params.yaml && echo a > a.txt`,
        '    outs: [a.txt]',
        '  b:',
        '    cmd: cat params.yaml > b.txt',
        '    deps: [a.txt]',
        '    params: [lr]',
        '    outs: [b.txt]',
        '',
      ].join('\n'),
    },
  });
  try {
    const result = await runJson(['lr=0.5'], { cwd: project.dir });
    expect(result.code).toBe(1);
    expect(statuses(result.report)).toMatchObject({ a: 'ran', b: 'failed' });
    expect(result.stderr + JSON.stringify(result.report)).toMatch(/params\.yaml.*outside/);
    expect(readFileSync(target, 'utf8')).toBe('lr: 7\n');
  } finally {
    await project.cleanup();
    rmSync(outside, { recursive: true, force: true });
  }
});

test('a stage that replaces its params.yaml with a link out of the repository: the runner never writes through it when it puts the file back', async () => {
  const outside = mkdtempSync(join(tmpdir(), 'fluksio-outside-'));
  const target = join(outside, 'bashrc');
  writeFileSync(target, 'echo hello\n');
  const project = await makeRepo({
    files: {
      'params.yaml': 'lr: 0.1\n',
      '.gitignore': 'b.txt\n',
      'dvc.yaml': [
        'stages:',
        '  b:',
        `    cmd: cat params.yaml > b.txt && ln -sf ${target} params.yaml`,
        '    params: [lr]',
        '    outs: [b.txt]',
        '',
      ].join('\n'),
    },
  });
  try {
    const result = await runJson(['lr=0.5'], { cwd: project.dir });
    expect(readFileSync(target, 'utf8')).toBe('echo hello\n');
    expect(readFileSync(join(project.dir, 'b.txt'), 'utf8')).toBe('lr: 0.5\n');
    expect(JSON.stringify(result.report.stages)).toMatch(
      /params\.yaml was not put back: it changed while the stage ran/,
    );
  } finally {
    await project.cleanup();
    rmSync(outside, { recursive: true, force: true });
  }
});

test('a params.yaml edited while its stage ran is left as edited, and the stage says so', async () => {
  const project = await makeRepo({
    files: {
      'params.yaml': 'lr: 0.1\n',
      'edited.yaml': 'lr: 0.3\n',
      '.gitignore': 'b.txt\n',
      'dvc.yaml': [
        'stages:',
        '  b:',
        '    cmd: cat params.yaml > b.txt && cp edited.yaml params.yaml',
        '    params: [lr]',
        '    outs: [b.txt]',
        '',
      ].join('\n'),
    },
  });
  try {
    const result = await runJson(['lr=0.5'], { cwd: project.dir });
    expect(readFileSync(join(project.dir, 'params.yaml'), 'utf8')).toBe('lr: 0.3\n');
    expect(JSON.stringify(result.report.stages)).toMatch(
      /params\.yaml was not put back: it changed while the stage ran/,
    );
  } finally {
    await project.cleanup();
  }
});
