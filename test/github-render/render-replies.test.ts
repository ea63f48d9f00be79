import { describe, expect, test } from 'vitest';
import {
  renderApprovalNeeded,
  renderHelpReply,
  renderQueued,
  renderRejection,
  renderShaRefused,
} from '../../app/github/render/render-replies.js';
import type { ParamSpec } from '../../schemas/pipeline.js';
import { HEAD_SHA } from './fixtures.js';

const specs: Record<string, ParamSpec> = {
  lr: { type: 'float', default: 0.01, min: 0 },
  model: { type: 'string', default: 'small', enum: ['small', 'large'] },
  seed: { type: 'int' },
};
const DESCRIBED = [
  'lr (float, default 0.01, min 0)',
  'model (string, default "small", one of "small", "large")',
  'seed (int, required)',
];
const GRAMMAR_LINES = [
  '/fluksio run [key=value ...] [--no-cache] [--sha <prefix>]',
  '/fluksio cancel [run-id]',
  '/fluksio help',
];

describe('help and rejection replies show the grammar and what the pipeline accepts', () => {
  test.each<[string, Record<string, ParamSpec> | null, string[]]>([
    ['declared params', specs, [`This pipeline's params:\n\n\`\`\`\n${DESCRIBED.join('\n')}\n\`\`\``]],
    ['no params', {}, ['This pipeline declares no params.']],
    [
      'an unreadable pipeline',
      null,
      ['no valid `fluksio.yml` (nor `dvc.yaml`) could be read at the head of this pull request'],
    ],
  ])('help with %s', (_name, params, expected) => {
    const reply = renderHelpReply(params);
    for (const line of [...GRAMMAR_LINES, ...expected]) expect(reply).toContain(line);
  });

  test.each<[string, string[], string]>([
    [
      'one problem',
      ['Parameter \'lr\': "fast" is not a float (e.g. lr=0.01)'],
      '😕 Nothing ran: the command has a problem.',
    ],
    [
      'several problems',
      [
        "Unknown parameter 'nosuch'; the pipeline declares: lr, model, seed",
        "Parameter 'seed' has no default: give it, e.g. seed=1",
      ],
      '😕 Nothing ran: the command has 2 problems.',
    ],
  ])('a rejection with %s says exactly what was wrong, then what is accepted', (_name, problems, first) => {
    const reply = renderRejection(problems, specs);
    expect(reply.split('\n')[0]).toBe(first);
    expect(reply).toContain(`\`\`\`\n${problems.join('\n')}\n\`\`\``);
    for (const line of [...DESCRIBED, ...GRAMMAR_LINES]) expect(reply).toContain(line);
  });

  test('echoed text cannot break out of its code block', () => {
    const reply = renderRejection(['"```@everyone" is not key=value (e.g. lr=0.1)'], null);
    expect(reply).toContain('````\n"```@everyone" is not key=value (e.g. lr=0.1)\n````');
  });
});

describe('commit pinning replies', () => {
  test('a refused --sha names the current head and the command to use', () => {
    const reply = renderShaRefused({ given: '0badc0ffee', currentHead: HEAD_SHA });
    expect(reply).toContain(
      `\`--sha 0badc0ffee\` is not the head of this pull request, which is now \`${HEAD_SHA}\``,
    );
    expect(reply).toContain(`\`\`\`\n/fluksio run --sha ${HEAD_SHA}\n\`\`\``);
  });

  test('a fork pull request without --sha gets the exact command to approve its head', () => {
    const reply = renderApprovalNeeded({ headSha: HEAD_SHA });
    expect(reply).toContain('this pull request comes from a fork');
    expect(reply).toContain(`\`\`\`\n/fluksio run --sha ${HEAD_SHA}\n\`\`\``);
  });
});

describe('the queued reply', () => {
  test.each<[string, Parameters<typeof renderQueued>[0]['runs'], string[]]>([
    [
      'one run',
      [{ id: '01JNRUN0000000000000000001', params: { lr: 0.1 }, checkName: 'fluksio' }],
      ['🚀 Queued 1 run:', '| `01JNRUN0000000000000000001` | `fluksio` | `lr=0.1` |'],
    ],
    [
      'a sweep',
      [
        { id: '01JNRUN0000000000000000001', params: { lr: 0.1, note: 'a|b' }, checkName: 'fluksio (lr=0.1)' },
        {
          id: '01JNRUN0000000000000000002',
          params: { lr: 0.01, note: 'a|b' },
          checkName: 'fluksio (lr=0.01)',
        },
      ],
      [
        '🚀 Queued 2 runs:',
        '| `01JNRUN0000000000000000001` | `fluksio (lr=0.1)` | `lr=0.1 note="a\\|b"` |',
        '| `01JNRUN0000000000000000002` | `fluksio (lr=0.01)` | `lr=0.01 note="a\\|b"` |',
      ],
    ],
    [
      'no params',
      [{ id: '01JNRUN0000000000000000003', params: {}, checkName: 'fluksio' }],
      ['| `01JNRUN0000000000000000003` | `fluksio` | (none) |'],
    ],
  ])('%s', (_name, runs, expected) => {
    const reply = renderQueued({ runs });
    for (const line of expected) expect(reply).toContain(line);
    expect(reply).toContain('/fluksio cancel');
    expect(reply).not.toContain('Not honoured');
  });

  test("what of a dvc.yaml cannot be honoured follows, each note as the repository's text in a code block", () => {
    const note =
      'stage upload: cannot be honoured (s3://bucket/`@everyone` is not a path in this repository)';
    const reply = renderQueued({
      runs: [{ id: '01JNRUN0000000000000000001', params: {}, checkName: 'fluksio' }],
      notes: [note],
    });
    expect(reply).toContain(`⚠️ Not honoured (the other stages run):\n\n\`\`\`\n${note}\n\`\`\``);
  });
});
