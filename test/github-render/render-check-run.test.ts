import { describe, expect, test } from 'vitest';
import { renderActionRequired } from '../../app/github/render-action-required.js';
import { checkRunName, sweptParams } from '../../present/github/check-run-name.js';
import { fitMarkdown } from '../../present/github/markdown.js';
import type { RenderedCheckRun } from '../../present/github/render-check-run.js';
import type { RunStatus } from '../../schemas/statuses.js';
import {
  expectWithinGitHubLimits,
  fenceLines,
  HEAD_SHA,
  SERVER_URL,
  makeAnnotation,
  makeInput,
  makeRun,
  makeStage,
  renderFixture,
} from './fixtures.js';

const RUN_ID = '01JNRUN0000000000000000001';
const SHOW = `fluksio show ${RUN_ID} --url ${SERVER_URL}`;
const POINTER = `\`${SHOW}\``;

describe('status and conclusion follow the run state (DESIGN §6)', () => {
  test.each<
    [RunStatus, string | null, RenderedCheckRun['status'], RenderedCheckRun['conclusion'], string, number]
  >([
    [
      'queued',
      'Waiting for a runner labelled gpu',
      'queued',
      null,
      'Queued: Waiting for a runner labelled gpu',
      0,
    ],
    ['running', null, 'in_progress', null, 'Running train (1 of 3 stages done)', 0],
    [
      'succeeded',
      null,
      'completed',
      'success',
      'Succeeded in 4m 05s · accuracy 0.9 (+0.05 ✅), loss 0.3 (+0.05 ❌)',
      2,
    ],
    [
      'failed',
      'Stage train failed: exit code 1',
      'completed',
      'failure',
      'Failed: Stage train failed: exit code 1',
      2,
    ],
    ['cancelled', 'Cancelled by @octocat', 'completed', 'cancelled', 'Cancelled: Cancelled by @octocat', 2],
    [
      'timed_out',
      'The run exceeded its 6h timeout',
      'completed',
      'timed_out',
      'Timed out: The run exceeded its 6h timeout',
      2,
    ],
    [
      'abandoned',
      'Runner gpu-box stopped responding; no retries left (1 of 1 used)',
      'completed',
      'failure',
      'Abandoned: Runner gpu-box stopped responding; no retries left (1 of 1 used)',
      2,
    ],
  ])('%s', (status, statusReason, checkStatus, conclusion, title, actions) => {
    const stages =
      status === 'running'
        ? [
            makeStage({ name: 'prepare', status: 'cached', cachedFrom: '01JNBASE000000000000000001' }),
            makeStage({ name: 'train', status: 'running' }),
            makeStage({ name: 'evaluate', status: 'pending' }),
          ]
        : makeInput().stages;
    const rendered = renderFixture(makeInput({ run: makeRun({ status, statusReason }), stages }));
    expect(rendered).toMatchObject({ name: 'fluksio', status: checkStatus, conclusion, title });
    expect(rendered.actions).toHaveLength(actions);
    expect(expectWithinGitHubLimits(rendered)).toEqual([]);
  });

  test('an abandoned run says why in its summary too', () => {
    const reason = 'Runner gpu-box stopped responding; no retries left (1 of 1 used)';
    const rendered = renderFixture(
      makeInput({ run: makeRun({ status: 'abandoned', statusReason: reason }) }),
    );
    expect(rendered.summary).toContain(`**${reason}**`);
  });
});

describe('the summary', () => {
  test('holds the stamp: commit, code digest, params, runner, duration', () => {
    const { summary } = renderFixture(makeInput({ run: makeRun({ dirty: true, attempt: 2 }) }));
    for (const expected of [
      `- **run** \`${RUN_ID}\` (attempt 2) · pipeline \`fluksio.yml\``,
      `- **commit** \`${HEAD_SHA}\` **dirty** (uncommitted changes)`,
      '- **code digest** `c0de000011112222`',
      '- **params** `lr=0.1 epochs=3` · digest `9a9a9a9a9a9a`',
      '- **runner** `gpu-box`',
      '- **duration** 4m 05s',
    ]) {
      expect(summary).toContain(expected);
    }
  });

  test('says whether the runner sandboxed the stages, once the run has started', () => {
    const sandbox = 'bubblewrap 0.8.0: own user and PID namespaces, read-only system';
    expect(renderFixture(makeInput({ run: makeRun({ sandbox }) })).summary).toContain(
      `- **sandbox** ${sandbox}`,
    );
    expect(renderFixture(makeInput({ run: makeRun({ sandbox: null }) })).summary).toContain(
      "- **sandbox** none: the stages ran as the runner's user, unsandboxed",
    );
    const queued = makeRun({ status: 'queued', startedAt: null, runnerName: null });
    expect(renderFixture(makeInput({ run: queued })).summary).not.toContain('**sandbox**');
  });

  test('a queued run leads with its waiting reason and has no digest yet', () => {
    const run = makeRun({
      status: 'queued',
      statusReason: 'Waiting for a runner labelled gpu',
      codeDigest: null,
      runnerName: null,
      metrics: {},
    });
    const { summary } = renderFixture(makeInput({ run, stages: [] }));
    expect(summary.split('\n')[0]).toBe('⏳ **Waiting for a runner labelled gpu**');
    expect(summary).toContain('- **code digest** computed when the run starts');
    expect(summary).toContain('- **runner** not claimed yet');
    expect(summary).toContain('- **queued since** 2026-03-01T12:00:00.000Z');
    expect(summary).toContain('No metrics yet.');
    expect(summary).toContain('No stage has started yet.');
  });

  test('lists each stage: ran or cached, its time, the run it came from, why it re-ran', () => {
    const { summary } = renderFixture(makeInput());
    expect(summary).toContain('| prepare | ♻️ cached | 1.50s | from run `01JNBASE000000000000000001` |');
    expect(summary).toContain('| train | ✅ ran | 4m 00s | train.py changed; lr 0.01 → 0.1 |');
  });

  test('the details say how a stage is keyed: what it read beyond its deps, or why it is not traced', () => {
    const notes = [
      'train read conf/x.json, which is not among its deps',
      "evaluate: not traced (node is not Python): keyed on the repository's whole code",
    ];
    const { text } = renderFixture(
      makeInput({
        stages: [
          makeStage({ name: 'train', notes: notes.slice(0, 1) }),
          makeStage({ name: 'evaluate', status: 'cached', notes: notes.slice(1) }),
        ],
      }),
    );
    for (const note of notes) expect(text).toContain(`- ${note}`);
  });

  test('a stage with many reasons shows the first in the table and points at the details', () => {
    const reasons = Array.from({ length: 40 }, (_, index) => `data/part-${index}.csv changed`);
    const { summary, text } = renderFixture(makeInput({ stages: [makeStage({ name: 'train', reasons })] }));
    expect(summary).toContain('(all 40 reasons in the details)');
    for (const reason of reasons) expect(text).toContain(`  - ${reason}`);
  });

  test('shows the metric diff against the named baseline, with ✅/❌ by goal and a sparkline', () => {
    const { summary } = renderFixture(makeInput());
    expect(summary).toContain('Against main @ 9f8e7d6 (merge-base), run `01JNBASE000000000000000001`.');
    expect(summary).toContain('| metric | baseline | this run | Δ | Δ% | | series |');
    expect(summary).toContain('| accuracy | 0.85 | **0.9** | +0.05 | +5.88% | ✅ |  |');
    expect(summary).toContain('| loss | 0.25 | **0.3** | +0.05 | +20% | ❌ | █▆▃▂▁ |');
  });

  test('says so when there is no baseline', () => {
    const { summary } = renderFixture(makeInput({ baseline: null }));
    expect(summary).toContain('No baseline: no earlier successful run of this pipeline was found');
    expect(summary).toContain('| accuracy | – | **0.9** | – | – |  |  |');
  });

  test('a failure shows the traceback tail and the failing stage log tail in fenced blocks', () => {
    const traceback = [
      'Traceback (most recent call last):',
      '  File "train.py", line 42, in <module>',
      'ZeroDivisionError: division by zero',
    ].join('\n');
    const { summary, title } = renderFixture(
      makeInput({
        run: makeRun({ status: 'failed', statusReason: null }),
        stages: [
          makeStage({
            name: 'train',
            status: 'failed',
            exitCode: 1,
            error: 'exit code 1',
            logTail: `epoch 1\n${traceback}\n`,
          }),
        ],
        tracebacks: [{ stage: 'train', text: traceback }],
      }),
    );
    expect(title).toBe('Failed: stage train: exit code 1');
    expect(summary).toContain('### ❌ Stage train failed: exit code 1');
    expect(summary).toContain(`Traceback:\n\n\`\`\`\n${traceback}\n\`\`\``);
    expect(summary).toContain(`\`\`\`\nepoch 1\n${traceback}\n\`\`\``);
    expect(summary).toContain(`the whole log: \`${SHOW} --log train\``);
    expect(summary).toContain(`The whole run and its logs: \`${SHOW}\``);
  });

  test('text in a log that looks like a fence cannot close the block early', () => {
    const { summary } = renderFixture(
      makeInput({
        run: makeRun({ status: 'failed' }),
        stages: [
          makeStage({ name: 'train', status: 'failed', error: 'exit code 1', logTail: 'a\n```\nb\n````' }),
        ],
      }),
    );
    expect(summary).toContain('`````\na\n```\nb\n````\n`````');
  });
});

describe('GitHub limits, with visible truncation', () => {
  const bytes = (text: string) => Buffer.byteLength(text, 'utf8');
  const failedWith = (logTail: string, tracebackText = 'Traceback\nValueError: x') =>
    makeInput({
      run: makeRun({ status: 'failed' }),
      stages: [makeStage({ name: 'train', status: 'failed', error: 'exit code 1', logTail })],
      tracebacks: [{ stage: 'train', text: tracebackText }],
    });

  test.each([
    [
      '2,000 lines of 50 characters',
      Array.from({ length: 2_000 }, (_, i) => `line ${i}`.padEnd(49, '.')).join('\n'),
      '1,975 earlier lines cut',
    ],
    ['one line of 100,000 characters', 'x'.repeat(100_000), '1 long line shortened'],
    ['100,000 characters of emoji', '🔥'.repeat(50_000), '1 long line shortened'],
  ])('a 100,000-character log tail (%s) stays within 65,535 and says what was cut', (_name, logTail, cut) => {
    expect(logTail.length).toBeGreaterThanOrEqual(98_000);
    const rendered = renderFixture(failedWith(logTail));
    expect(expectWithinGitHubLimits(rendered)).toEqual([]);
    expect(rendered.summary).toContain(
      `Last lines of its output (${cut}); the whole log: \`${SHOW} --log train\``,
    );
    expect(fenceLines(rendered.summary) % 2).toBe(0);
  });

  test.each([
    ['an ASCII traceback', 'File "train.py", line 1\n'.repeat(8_000)],
    ['a multi-byte traceback', 'Ошибка: деление на ноль 🔥\n'.repeat(8_000)],
  ])(
    'a text over the limit (%s) is cut at a line, the fence closed, with a pointer',
    (_name, tracebackText) => {
      const rendered = renderFixture(failedWith('boom', tracebackText));
      expect(bytes(rendered.text)).toBeGreaterThan(60_000);
      expect(expectWithinGitHubLimits(rendered)).toEqual([]);
      expect(fenceLines(rendered.text) % 2).toBe(0);
      expect(rendered.text).toMatch(
        /✂️ \*\*Truncated\*\*: [\d,]+ more lines did not fit GitHub's limit of 65,535 bytes/,
      );
      expect(rendered.text.endsWith(`everything is in ${POINTER}.`)).toBe(true);
    },
  );

  test('a summary over the limit (3,000 stages) keeps its head and ends with the pointer', () => {
    const stages = Array.from({ length: 3_000 }, (_, index) =>
      makeStage({
        name: `stage_${index}`,
        reasons: [`data/shard-${index}.parquet changed (upstream split re-ran)`],
      }),
    );
    const rendered = renderFixture(makeInput({ stages }));
    expect(expectWithinGitHubLimits(rendered)).toEqual([]);
    expect(rendered.summary).toContain(`- **commit** \`${HEAD_SHA}\``);
    expect(rendered.summary).toContain('| stage_0 |');
    expect(rendered.summary).not.toContain('| stage_2999 |');
    expect(rendered.summary.endsWith(`everything is in ${POINTER}.`)).toBe(true);
  });

  test('a long title is cut to 255 characters', () => {
    const rendered = renderFixture(
      makeInput({ run: makeRun({ status: 'failed', statusReason: 'why '.repeat(200) }) }),
    );
    expect(rendered.title).toHaveLength(255);
    expect(rendered.title.endsWith('…')).toBe(true);
  });

  // The notice is 101 bytes here; each line below is 101 bytes with its newline.
  const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((char) => char.repeat(100));
  const notice = (cut: number, max: number) =>
    `\n\n---\n✂️ **Truncated**: ${cut} more lines did not fit GitHub's limit of ${max} bytes; everything is in X.`;
  test.each([
    ['fits as it is', `${a}\n${b}`, 201, `${a}\n${b}`],
    ['cut at a line', `${a}\n${b}\n${c}`, 250, `${a}${notice(2, 250)}`],
    ['two lines kept', `${a}\n${b}\n${c}\n${d}`, 310, `${a}\n${b}${notice(2, 310)}`],
    [
      'an open fence is closed',
      `\`\`\`\n${a}\n${b}\n${c}\n\`\`\``,
      250,
      `\`\`\`\n${a}\n\`\`\`${notice(3, 250)}`,
    ],
    ['nothing fits but the notice', `${a}${b}${c}`, 150, notice(1, 150).trimStart()],
  ])('fitMarkdown: %s', (_name, markdown, max, expected) => {
    const fitted = fitMarkdown(markdown, max, 'X');
    expect(fitted).toBe(expected);
    expect(bytes(fitted)).toBeLessThanOrEqual(max);
  });
});

describe('annotations', () => {
  test('120 annotations on files all come out, in order, for the outbox to send 50 at a time', () => {
    const annotations = Array.from({ length: 120 }, (_, index) =>
      makeAnnotation({ line: index + 1, message: `problem ${index}` }),
    );
    const rendered = renderFixture(makeInput({ run: makeRun({ status: 'failed' }), annotations }));
    expect(rendered.annotations).toHaveLength(120);
    expect(rendered.annotations.map((note) => note.message)).toEqual(annotations.map((note) => note.message));
    expect(rendered.text).toContain('## Annotations (120)');
    expect(rendered.text).toContain('train.py:120 error [stage train] problem 119');
  });

  test.each([
    [
      'an error is a failure',
      makeAnnotation(),
      {
        path: 'train.py',
        start_line: 42,
        end_line: 42,
        annotation_level: 'failure',
        message: 'ZeroDivisionError: division by zero',
        title: 'stage train',
      },
    ],
    [
      'a warning',
      makeAnnotation({ level: 'warning', title: 'Deprecated' }),
      { annotation_level: 'warning', title: 'Deprecated' },
    ],
    ['a notice', makeAnnotation({ level: 'notice' }), { annotation_level: 'notice' }],
    ['no line means line 1', makeAnnotation({ line: null }), { start_line: 1, end_line: 1 }],
    ['a ./ prefix is dropped', makeAnnotation({ path: './src/model.py' }), { path: 'src/model.py' }],
    ['backslashes become slashes', makeAnnotation({ path: 'src\\model.py' }), { path: 'src/model.py' }],
    ['an empty message gets one', makeAnnotation({ message: '' }), { message: 'error in stage train' }],
  ])('%s', (_name, note, expected) => {
    const [converted] = renderFixture(makeInput({ annotations: [note] })).annotations;
    expect(converted).toMatchObject(expected);
  });

  test.each([
    ['no path', makeAnnotation({ path: null, message: 'CUDA out of memory' })],
    ['an absolute path', makeAnnotation({ path: '/usr/lib/python3/site.py', message: 'CUDA out of memory' })],
    ['a Windows drive', makeAnnotation({ path: 'C:/x.py', message: 'CUDA out of memory' })],
    [
      'a path leaving the repository',
      makeAnnotation({ path: '../other/x.py', message: 'CUDA out of memory' }),
    ],
  ])('an annotation with %s goes in the text only', (_name, note) => {
    const rendered = renderFixture(makeInput({ annotations: [note] }));
    expect(rendered.annotations).toEqual([]);
    expect(rendered.text).toContain('CUDA out of memory');
  });

  test('message and title are cut to GitHub sizes', () => {
    const note = makeAnnotation({ message: 'é'.repeat(70_000), title: 't'.repeat(300) });
    const [converted] = renderFixture(makeInput({ annotations: [note] })).annotations;
    expect(Buffer.byteLength(converted?.message ?? '', 'utf8')).toBeLessThanOrEqual(64_000);
    expect(converted?.message).toMatch(/… \(cut to GitHub's 64,000-byte limit\)$/);
    expect(converted?.title).toHaveLength(255);
  });
});

describe('actions', () => {
  test('a completed run offers Re-run and Re-run without cache within GitHub limits', () => {
    const { actions } = renderFixture(makeInput());
    expect(actions.map((action) => action.identifier)).toEqual(['rerun', 'rerun-no-cache']);
    expect(actions.map((action) => action.label)).toEqual(['Re-run', 'Re-run without cache']);
    expect(actions.length).toBeLessThanOrEqual(3);
    for (const action of actions) {
      expect(action.label.length).toBeLessThanOrEqual(20);
      expect(action.description.length).toBeLessThanOrEqual(40);
      expect(action.identifier.length).toBeLessThanOrEqual(20);
    }
  });
});

describe('action required', () => {
  test('a fork pull request prints the exact approval command in a code block', () => {
    const rendered = renderActionRequired({ kind: 'approval', headSha: HEAD_SHA, prNumber: 12 }, 'fluksio');
    expect(rendered).toMatchObject({
      name: 'fluksio',
      status: 'completed',
      conclusion: 'action_required',
      actions: [],
    });
    expect(rendered.summary).toContain(`\n\`\`\`\n/fluksio run --sha ${HEAD_SHA}\n\`\`\`\n`);
    expect(rendered.summary).toContain('Pull requests from forks never run automatically');
    expect(rendered.summary).toContain('Pull request #12');
    expect(expectWithinGitHubLimits(rendered)).toEqual([]);
  });

  test('a broken fluksio.yml lists every problem as file:line: path: message and annotates the file', () => {
    const rendered = renderActionRequired(
      {
        kind: 'broken-pipeline',
        path: 'fluksio.yml',
        sha: HEAD_SHA,
        problems: [
          { path: 'stages.train.params[2]', message: "unknown param 'x'", line: 12 },
          {
            path: 'stages.evaluate.deps[0]',
            message: '"model.bin" is neither tracked nor produced by a stage',
            line: 20,
          },
          { path: '', message: 'a cycle: prepare → train → prepare' },
        ],
      },
      'fluksio',
    );
    expect(rendered).toMatchObject({
      conclusion: 'action_required',
      status: 'completed',
      title: 'fluksio.yml has 3 problems',
    });
    expect(rendered.summary).toContain(
      [
        "fluksio.yml:12: stages.train.params[2]: unknown param 'x'",
        'fluksio.yml:20: stages.evaluate.deps[0]: "model.bin" is neither tracked nor produced by a stage',
        'fluksio.yml: a cycle: prepare → train → prepare',
      ].join('\n'),
    );
    expect(rendered.annotations).toEqual([
      expect.objectContaining({ path: 'fluksio.yml', start_line: 12, annotation_level: 'failure' }),
      expect.objectContaining({ path: 'fluksio.yml', start_line: 20, annotation_level: 'failure' }),
    ]);
  });
});

describe('check run names', () => {
  test.each<[string, Parameters<typeof checkRunName>[1], string]>([
    ['a plain run', null, 'fluksio'],
    ['nothing swept', {}, 'fluksio'],
    ['a sweep member', { lr: 0.1, seed: 2 }, 'fluksio (lr=0.1, seed=2)'],
    ['strings and bools', { model: 'large', fast: true }, 'fluksio (model=large, fast=true)'],
    [
      'a value with blanks or commas is quoted',
      { note: 'two words', tag: 'a,b' },
      'fluksio (note="two words", tag="a,b")',
    ],
  ])('%s', (_name, swept, expected) => {
    expect(checkRunName('fluksio', swept)).toBe(expected);
  });

  test('a long name is cut to 100 characters and stays distinct', () => {
    const a = checkRunName('fluksio', { note: `${'x'.repeat(150)}a` });
    const b = checkRunName('fluksio', { note: `${'x'.repeat(150)}b` });
    expect(a.length).toBeLessThanOrEqual(100);
    expect(b.length).toBeLessThanOrEqual(100);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^fluksio \(note=x+… #[0-9a-f]{8}\)$/);
  });

  test('a member is named by the params its sweep varies, in the order they were swept', () => {
    const params = { lr: 0.1, seed: 1, note: 'two words' };
    expect(checkRunName('fluksio', sweptParams(params, ['note', 'lr']))).toBe(
      'fluksio (note="two words", lr=0.1)',
    );
    expect(sweptParams(params, ['absent'])).toEqual({});
  });
});
