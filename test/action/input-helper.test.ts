import { describe, expect, test } from 'vitest';
import { getInputs } from '../../action/input-helper.js';
import { stageEnvironmentSource } from '../../action/stage-environment-source.js';

const WORKFLOW = { GITHUB_WORKSPACE: '/work', GITHUB_REPOSITORY: 'octo/ml', GITHUB_RUN_ID: '42' };

describe('getInputs', () => {
  test('missing inputs take the defaults of action.yml: local mode, the pipeline found at the root', () => {
    const inputs = getInputs(WORKFLOW);
    expect(inputs).toMatchObject({
      params: [],
      pipeline: null,
      noCache: false,
      server: null,
      wait: true,
      githubToken: '',
      checkName: 'fluksio',
      workflow: { workspace: '/work', repository: 'octo/ml', runId: '42', pullRequest: null },
    });
  });

  test("an empty pipeline input is action.yml's default: fluksio.yml, else dvc.yaml, found as fluksio run finds them", () => {
    expect(getInputs({ ...WORKFLOW, INPUT_PIPELINE: ' ' }).pipeline).toBeNull();
    expect(getInputs({ ...WORKFLOW, INPUT_PIPELINE: 'dvc.yaml' }).pipeline).toBe('dvc.yaml');
  });

  test('inputs are read as the runner passes them, trimmed; a server makes submit mode', () => {
    const inputs = getInputs({
      ...WORKFLOW,
      INPUT_PARAMS: ' lr=0.1,0.01 note="two words" ',
      'INPUT_NO-CACHE': 'TRUE',
      INPUT_SERVER: 'https://fluksio.example.com/',
      'INPUT_SERVER-TOKEN': 'fxt_1',
      INPUT_WAIT: 'False',
    });
    expect(inputs.params).toEqual([
      { key: 'lr', values: ['0.1', '0.01'] },
      { key: 'note', values: ['two words'] },
    ]);
    expect(inputs).toMatchObject({
      noCache: true,
      wait: false,
      server: { url: 'https://fluksio.example.com', token: 'fxt_1' },
    });
  });

  test.each([
    [{ INPUT_WAIT: 'yes' }, `Input 'wait': "yes" is not a boolean (true or false)`],
    [{ 'INPUT_NO-CACHE': '1' }, `Input 'no-cache': "1" is not a boolean (true or false)`],
    [
      { INPUT_SERVER: 'fluksio.example.com', 'INPUT_SERVER-TOKEN': 't' },
      `Input 'server': "fluksio.example.com" is not an http:// or https:// URL (e.g. https://fluksio.example.com)`,
    ],
    [
      { INPUT_SERVER: 'ftp://deploy:hunter2@fluksio.example.com', 'INPUT_SERVER-TOKEN': 't' },
      `Input 'server': "ftp://fluksio.example.com/" is not an http:// or https:// URL (e.g. https://fluksio.example.com)`,
    ],
    [
      { INPUT_SERVER: 'deploy:hunter2@fluksio.example.com', 'INPUT_SERVER-TOKEN': 't' },
      `Input 'server': "fluksio.example.com" is not an http:// or https:// URL (e.g. https://fluksio.example.com)`,
    ],
    [
      { INPUT_SERVER: 'https://fluksio.example.com' },
      `Input 'server-token': empty, but 'server' is set; expected an API token that may submit runs (fluksio token add --submit)`,
    ],
    [
      { INPUT_PARAMS: 'lr=0.1 lr=0.2' },
      `Input 'params': Parameter 'lr' is given twice; for a sweep write lr=a,b`,
    ],
    [{ INPUT_PARAMS: 'note="open' }, `Input 'params': Unterminated " quote in "\\"open"`],
  ])('%o is refused: %s', (env, message) => {
    expect(() => getInputs({ ...WORKFLOW, ...env })).toThrow(message);
  });

  test('a server URL’s user name and password are dropped: the control plane authenticates server-token, and the URL is printed', () => {
    const inputs = getInputs({
      ...WORKFLOW,
      INPUT_SERVER: 'https://deploy:hunter2@fluksio.example.com/api/',
      'INPUT_SERVER-TOKEN': 'fxt_1',
    });
    expect(inputs.server).toEqual({ url: 'https://fluksio.example.com/api', token: 'fxt_1' });
  });

  test("the run's branch is the pull request's head branch, else the pushed branch; a tag is none", () => {
    const branchOf = (env: Record<string, string>) => getInputs({ ...WORKFLOW, ...env }).workflow.branch;
    const pushed = { GITHUB_REF_NAME: 'main', GITHUB_REF_TYPE: 'branch' };
    expect(branchOf(pushed)).toBe('main');
    // On a pull request GITHUB_REF_NAME is `7/merge`: the head branch is what the list filters by.
    expect(
      branchOf({ GITHUB_HEAD_REF: 'feature/lr', GITHUB_REF_NAME: '7/merge', GITHUB_REF_TYPE: 'branch' }),
    ).toBe('feature/lr');
    expect(branchOf({ GITHUB_HEAD_REF: '', ...pushed })).toBe('main');
    expect(branchOf({ GITHUB_REF_NAME: 'v1.0', GITHUB_REF_TYPE: 'tag' })).toBeNull();
    expect(branchOf({})).toBeNull();
  });

  test('every problem is reported at once, one line each', () => {
    expect(() =>
      getInputs({ ...WORKFLOW, INPUT_WAIT: 'maybe', INPUT_PARAMS: 'lr', 'INPUT_CHECK-NAME': '' }),
    ).toThrow(
      [
        `Input 'wait': "maybe" is not a boolean (true or false)`,
        `Input 'check-name': empty; expected a name for the check run, e.g. fluksio`,
        `Input 'params': "lr" is not key=value (e.g. lr=0.1)`,
      ].join('\n'),
    );
  });
});

test('stages never get the inputs, the runner’s credentials, its file commands, or a variable holding a token', () => {
  const source = stageEnvironmentSource(
    {
      PATH: '/bin',
      HOME: '/home/runner',
      CUDA_VISIBLE_DEVICES: '0',
      'INPUT_GITHUB-TOKEN': 'ghs_x',
      INPUT_PARAMS: 'lr=1',
      ACTIONS_RUNTIME_TOKEN: 'r',
      ACTIONS_ID_TOKEN_REQUEST_URL: 'u',
      GITHUB_TOKEN: 'ghs_x',
      GITHUB_OUTPUT: '/tmp/out',
      GITHUB_ENV: '/tmp/env',
      STATE_runs: '[]',
      MY_COPY: 'fxt_secret',
      GITHUB_SHA: 'abc',
    },
    ['ghs_x', 'fxt_secret', ''],
  );
  expect(source).toEqual({
    PATH: '/bin',
    HOME: '/home/runner',
    CUDA_VISIBLE_DEVICES: '0',
    GITHUB_SHA: 'abc',
  });
});
