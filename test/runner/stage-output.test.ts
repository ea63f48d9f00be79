import { afterEach, describe, expect, test } from 'vitest';
import type { Annotation } from '../../schemas/annotation.js';
import type { MetricPoint } from '../../schemas/metric-point.js';
import { Masker } from '../../runner/output/masker.js';
import { StageOutput } from '../../runner/output/stage-output.js';
import { runStageProcess } from '../../runner/sandbox/stage-process.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';

/** A StageOutput for stage `train` running in `/repo/ml`, recording what it reports. */
function stageOutput(
  options: {
    masker?: Masker;
    cwd?: string;
    repoRoot?: string;
    maxLogBytes?: number;
    maxMetrics?: number;
    maxMetricPoints?: number;
    maxAnnotations?: number;
  } = {},
) {
  const logs: string[] = [];
  const metrics: MetricPoint[] = [];
  const annotations: Annotation[] = [];
  const { masker, cwd, repoRoot, ...limits } = options;
  const output = new StageOutput({
    stage: 'train',
    masker: masker ?? new Masker(),
    cwd: cwd ?? '/repo/ml',
    repoRoot: repoRoot ?? '/repo',
    onLog: (line) => logs.push(line),
    onMetric: (point) => metrics.push(point),
    onAnnotation: (annotation) => annotations.push(annotation),
    ...limits,
  });
  const stdout = (...lines: string[]) => lines.forEach((line) => output.push('stdout', line));
  return { output, stdout, logs, metrics, annotations };
}

describe('metrics', () => {
  test('each point carries when it was printed, for the wall-time axis', () => {
    const { stdout, metrics } = stageOutput();
    const before = Date.now();
    stdout('::metric name=loss::1.5', '::metric name=loss,step=7::0.5');
    const after = Date.now();
    expect(metrics).toHaveLength(2);
    for (const point of metrics) {
      expect(point.at).toBeGreaterThanOrEqual(before);
      expect(point.at).toBeLessThanOrEqual(after);
    }
  });

  test('a metric without step= gets the count of its earlier points as step', () => {
    const { stdout, metrics, logs } = stageOutput();
    stdout(
      '::metric name=loss::1.5',
      '::metric name=loss::0.5',
      '::metric name=acc::0.9',
      '::metric name=loss,step=10::0.25',
      '::metric name=loss::2e-1',
    );
    expect(metrics.map(({ name, step, value }) => [name, step, value])).toEqual([
      ['loss', 0, 1.5],
      ['loss', 1, 0.5],
      ['acc', 0, 0.9],
      ['loss', 10, 0.25],
      ['loss', 3, 0.2],
    ]);
    expect(metrics[0]?.stage).toBe('train');
    expect(logs).toEqual([]);
  });

  test.each([
    { line: '::metric name=loss::fast', why: '"fast" is not a number' },
    { line: '::metric name=loss::', why: '"" is not a number' },
    { line: '::metric name=loss::0x10', why: '"0x10" is not a number' },
    { line: '::metric name=loss::nan', why: '"nan" is not a finite number' },
    { line: '::metric name=loss::-Infinity', why: '"-Infinity" is not a finite number' },
    { line: '::metric name=loss::1e999', why: '"1e999" is not a finite number' },
    { line: '::metric::0.5', why: 'it has no name= property' },
    { line: '::metric name=::0.5', why: 'it has no name= property' },
    { line: '::metric name=loss,step=-1::0.5', why: 'step "-1" is not a non-negative integer' },
    { line: '::metric name=loss,step=1.5::0.5', why: 'step "1.5" is not a non-negative integer' },
    {
      line: '::metric name=loss step=3::0.5',
      why: 'its name "loss step=3" holds another property: properties are separated by commas (name=loss,step=3)',
    },
  ])('$line is no metric: the log says why', ({ line, why }) => {
    const { stdout, metrics, logs } = stageOutput();
    stdout(line, '::metric name=loss::0.5');
    expect(logs).toEqual([`fluksio: ignored ${line}: ${why}`]);
    expect(metrics.map(({ step }) => step)).toEqual([0]);
  });
});

describe('annotations', () => {
  test.each([
    { file: 'src/train.py', path: 'ml/src/train.py' },
    { file: '/repo/prepare.py', path: 'prepare.py' },
    { file: '../common/util.py', path: 'common/util.py' },
    { file: '/usr/lib/python3/x.py', path: null },
    { file: '../../etc/passwd', path: null },
  ])('::error file=$file is annotated at $path, relative to the repository root', ({ file, path }) => {
    const { stdout, annotations, logs } = stageOutput();
    const line = `::error file=${file},line=42,title=Diverged::loss is NaN`;
    stdout(line);
    expect(annotations).toEqual([
      { stage: 'train', path, line: 42, level: 'error', message: 'loss is NaN', title: 'Diverged' },
    ]);
    expect(logs).toEqual([line]);
  });

  test('::warning and ::notice are annotations too; a missing or bad line is null', () => {
    const { stdout, annotations } = stageOutput();
    stdout('::warning file=train.py,line=zero::slow', '::NOTICE::done in 3 epochs');
    expect(annotations).toEqual([
      { stage: 'train', path: 'ml/train.py', line: null, level: 'warning', message: 'slow', title: null },
      { stage: 'train', path: null, line: null, level: 'notice', message: 'done in 3 epochs', title: null },
    ]);
  });
});

describe('masking and commands', () => {
  test('::add-mask hides the value from then on, on both streams, and is not logged itself', () => {
    const { output, stdout, logs } = stageOutput();
    stdout('before tok-123', '::add-mask::tok-123', 'after tok-123');
    output.push('stderr', 'stderr tok-123');
    expect(logs).toEqual(['before tok-123', 'after ***', 'stderr ***']);
  });

  test('::add-mask on stderr, as a script keeping its stdout clean writes it, is read there too', () => {
    const { output, stdout, logs } = stageOutput();
    output.push('stderr', '::add-mask::tok-456');
    stdout('after tok-456');
    output.push('stderr', 'stderr tok-456');
    expect(logs).toEqual(['after ***', 'stderr ***']);
  });

  test('a new mask that contains a known secret is registered whole', () => {
    const masker = new Masker();
    masker.add('abc');
    const { stdout, logs } = stageOutput({ masker });
    stdout('::add-mask::abcdef', 'x abcdef y', 'z def');
    expect(logs).toEqual(['x *** y', 'z def']);
  });

  test('masking happens before parsing: a secret never reaches an annotation or a metric name', () => {
    const masker = new Masker();
    masker.add('hunter2');
    const { stdout, annotations, metrics, logs } = stageOutput({ masker });
    stdout('::error title=hunter2::password hunter2 rejected', '::metric name=hunter2::1');
    expect(annotations[0]).toMatchObject({ message: 'password *** rejected', title: '***' });
    expect(metrics[0]?.name).toBe('***');
    expect(logs).toEqual(['::error title=***::password *** rejected']);
  });

  test('and after: a secret a command spells with only some characters escaped is masked once unescaped', () => {
    const masker = new Masker();
    masker.add('a%b:c');
    const { stdout, annotations, metrics } = stageOutput({ masker });
    // `%3A` escaped, `%` not: no escaped form of the secret, but unescaped it is the secret.
    stdout('::warning title=a%b%3Ac::x', '::metric name=a%b%3Ac::1');
    expect(annotations[0]).toMatchObject({ message: 'x', title: '***' });
    expect(metrics[0]?.name).toBe('***');
  });

  test('::stop-commands turns commands off until its token comes back', () => {
    const { stdout, metrics, annotations, logs } = stageOutput();
    stdout(
      '::stop-commands::pause-42',
      '::metric name=x::1',
      '::error::not an error',
      '::add-mask::visible',
      '::pause-42::',
      '::metric name=x::2',
    );
    expect(logs).toEqual(['::metric name=x::1', '::error::not an error', '::add-mask::visible']);
    expect(metrics.map(({ value, step }) => [value, step])).toEqual([[2, 0]]);
    expect(annotations).toEqual([]);
  });

  test('commands are read on stdout only', () => {
    const { output, metrics, logs } = stageOutput();
    output.push('stderr', '::metric name=x::1');
    expect(metrics).toEqual([]);
    expect(logs).toEqual(['::metric name=x::1']);
  });

  test('groups, unknown commands and ordinary lines are logged as they are', () => {
    const { output, stdout, logs } = stageOutput();
    stdout('::group::Epoch 1', 'step 1', '::endgroup::', '::set-output name=x::1', '  ::metric name=x::1');
    expect(logs).toEqual([
      '::group::Epoch 1',
      'step 1',
      '::endgroup::',
      '::set-output name=x::1',
      '  ::metric name=x::1',
    ]);
    expect(output.fullLog()).toBe(`${logs.join('\n')}\n`);
  });

  test('the tail keeps the newest lines and says how many went', () => {
    const output = new StageOutput({
      stage: 'train',
      masker: new Masker(),
      cwd: '/repo',
      repoRoot: '/repo',
      onLog: () => {},
      onMetric: () => {},
      onAnnotation: () => {},
      tail: { maxLines: 2 },
    });
    for (const line of ['a', 'b', 'c']) output.push('stdout', line);
    expect(output.finish().tail).toBe('[fluksio: 1 earlier lines not shown]\nb\nc\n');
    expect(output.fullLog()).toBe('a\nb\nc\n');
  });
});

describe('the log limit', () => {
  test('past the limit plain text is dropped, saying so, while ::metric and annotations still arrive', () => {
    const { output, stdout, logs, metrics, annotations } = stageOutput({ maxLogBytes: 20 });
    stdout('0123456789', 'abcdefgh', 'dropped line', '::metric name=loss::0.25', '::error::late', 'more');
    output.push('stderr', 'also dropped');
    const { tail } = output.finish();
    expect(logs).toEqual([
      '0123456789',
      'abcdefgh',
      expect.stringMatching(/^fluksio: this stage's log reached its limit of 20 B \(log_limit\)/),
      'fluksio: dropped 45 bytes (4 lines) of output past the log limit of 20 B',
    ]);
    expect(output.fullLog()).toBe(`${logs.join('\n')}\n`);
    expect(metrics.map(({ name, value }) => [name, value])).toEqual([['loss', 0.25]]);
    expect(annotations.map(({ message }) => message)).toEqual(['late']);
    // The tail follows the output's end, which explains a failure.
    expect(tail).toContain('also dropped\n');
  });

  test('a secret printed past the limit is masked in the tail', () => {
    const masker = new Masker();
    masker.add('hunter2');
    const { output, stdout } = stageOutput({ masker, maxLogBytes: 10 });
    stdout('0123456789', 'the password is hunter2');
    expect(output.finish().tail).toContain('the password is ***\n');
    expect(output.fullLog()).not.toContain('the password is');
  });

  test('a traceback printed past the limit is still found', () => {
    const { output, stdout } = stageOutput({ maxLogBytes: 10 });
    stdout('0123456789');
    output.push('stderr', 'Traceback (most recent call last):');
    output.push('stderr', '  File "/repo/ml/train.py", line 3, in <module>');
    output.push('stderr', 'ZeroDivisionError: division by zero');
    expect(output.finish().tracebacks.map(({ message }) => message)).toEqual([
      'ZeroDivisionError: division by zero',
    ]);
    expect(output.fullLog()).not.toContain('ZeroDivisionError');
  });
});

describe('the metric and annotation limits', () => {
  test('a metric past the most a stage keeps is ignored, saying so once, with a warning on the stage', () => {
    const { output, stdout, logs, metrics, annotations } = stageOutput({ maxMetrics: 2 });
    stdout('::metric name=a::1', '::metric name=b::2', '::metric name=c::3', '::metric name=d::4');
    stdout('::metric name=c::5', '::metric name=a::6');
    output.finish();
    expect(metrics.map(({ name, value }) => [name, value])).toEqual([
      ['a', 1],
      ['b', 2],
      ['a', 6],
    ]);
    expect(output.metricFinals()).toEqual({ a: 6, b: 2 });
    expect(logs.filter((line) => line.startsWith('fluksio:'))).toEqual([
      'fluksio: this stage reported 2 metrics, the most one stage keeps: points of other metrics are ignored, from "c" on',
      'fluksio: ignored 3 points of 2 metrics past the limit of 2 metrics per stage',
    ]);
    expect(annotations).toEqual([
      expect.objectContaining({ level: 'warning', title: 'Limit reached', path: null, line: null }),
    ]);
  });

  test('past the most points a stage keeps its series stop, and its final values follow the last point printed', () => {
    const { output, stdout, logs, metrics, annotations } = stageOutput({ maxMetricPoints: 3 });
    stdout('::metric name=loss::4', '::metric name=acc::0.1', '::metric name=loss::3');
    stdout('::metric name=loss::2', '::metric name=acc::0.9', '::metric name=loss::1');
    output.finish();
    expect(metrics.map(({ name, value, step }) => [name, value, step])).toEqual([
      ['loss', 4, 0],
      ['acc', 0.1, 0],
      ['loss', 3, 1],
    ]);
    expect(output.metricFinals()).toEqual({ loss: 1, acc: 0.9 });
    expect(logs.filter((line) => line.startsWith('fluksio:'))).toEqual([
      expect.stringMatching(/^fluksio: this stage reported 3 metric points, the most one stage keeps/),
      'fluksio: left 3 metric points out of the series past the limit of 3 points per stage (final values count them)',
    ]);
    expect(annotations.map(({ level }) => level)).toEqual(['warning']);
  });

  test('past the most annotations a stage keeps they stay in the log, and a traceback is still annotated', () => {
    const { output, stdout, logs, annotations } = stageOutput({ maxAnnotations: 2 });
    stdout('::warning::one', '::error::two', '::notice::three', '::warning::four');
    output.push('stderr', 'Traceback (most recent call last):');
    output.push('stderr', '  File "/repo/ml/train.py", line 3, in <module>');
    output.push('stderr', 'ZeroDivisionError: division by zero');
    output.finish();
    expect(annotations.map(({ level, message }) => [level, message])).toEqual([
      ['warning', 'one'],
      ['error', 'two'],
      ['warning', expect.stringMatching(/^this stage reported 2 annotations, the most one stage keeps/)],
      ['error', 'ZeroDivisionError: division by zero'],
    ]);
    expect(logs).toContain('::notice::three');
    expect(logs).toContain('::warning::four');
    expect(logs).toContain(
      'fluksio: left 2 annotations out past the limit of 2 per stage (they are in the log)',
    );
  });

  test('names ignored past the limit are counted, not remembered without end', () => {
    const { output, stdout, logs } = stageOutput({ maxMetrics: 2 });
    stdout('::metric name=a::1', '::metric name=b::2');
    stdout(...Array.from({ length: 5 }, (_, i) => `::metric name=x${i}::${i}`));
    output.finish();
    expect(logs.at(-1)).toBe('fluksio: ignored 5 points of 2+ metrics past the limit of 2 metrics per stage');
  });

  test('a limit that is not a positive integer is refused', () => {
    expect(() => stageOutput({ maxMetricPoints: 0 })).toThrow(
      /points limit must be a positive integer, got 0/,
    );
  });
});

describe('tracebacks', () => {
  test('a traceback becomes an error annotation at its innermost repository frame', () => {
    const { output, annotations } = stageOutput();
    const traceback = [
      'Traceback (most recent call last):',
      '  File "/repo/ml/train.py", line 9, in <module>',
      '  File "/repo/ml/pkg/mod.py", line 2, in inner',
      '  File "/usr/lib/python3.11/fractions.py", line 5, in f',
      'ZeroDivisionError: division by zero',
    ];
    output.push('stdout', 'epoch 1');
    for (const line of traceback) output.push('stderr', line);
    const { tracebacks } = output.finish();
    expect(tracebacks.map(({ message }) => message)).toEqual(['ZeroDivisionError: division by zero']);
    expect(annotations).toEqual([
      {
        stage: 'train',
        path: 'ml/pkg/mod.py',
        line: 2,
        level: 'error',
        message: 'ZeroDivisionError: division by zero',
        title: 'ZeroDivisionError in ml/pkg/mod.py',
      },
    ]);
  });

  test('interleaved stdout does not split a stderr traceback, and one outside the repository has no path', () => {
    const { output, annotations } = stageOutput();
    output.push('stderr', 'Traceback (most recent call last):');
    output.push('stdout', 'progress 99%');
    output.push('stderr', '  File "/usr/lib/python3.11/json/decoder.py", line 5, in decode');
    output.push('stderr', 'json.decoder.JSONDecodeError: Expecting value');
    output.finish();
    expect(annotations).toEqual([
      {
        stage: 'train',
        path: null,
        line: null,
        level: 'error',
        message: 'json.decoder.JSONDecodeError: Expecting value',
        title: 'json.decoder.JSONDecodeError',
      },
    ]);
  });
});

describe('a real stage', () => {
  let repo: TestRepo;
  afterEach(async () => repo.cleanup());

  async function runStage(cmd: string, masker = new Masker()) {
    const cwd = `${repo.dir}/ml`;
    const annotations: Annotation[] = [];
    const metrics: MetricPoint[] = [];
    const output = new StageOutput({
      stage: 'train',
      masker,
      cwd,
      repoRoot: repo.dir,
      onLog: () => {},
      onMetric: (point) => metrics.push(point),
      onAnnotation: (annotation) => annotations.push(annotation),
    });
    const result = await runStageProcess({
      cmd,
      cwd,
      env: { PATH: '/usr/local/bin:/usr/bin:/bin', PYTHONUNBUFFERED: '1' },
      timeoutMs: 60_000,
      onLine: (stream, line) => output.push(stream, line),
    });
    const { tail } = output.finish();
    return { result, tail, log: output.fullLog(), annotations, metrics };
  }

  test('a secret split across two writes never reaches the log', async () => {
    repo = await makeRepo({
      commit: false,
      files: {
        'ml/leak.py': [
          'import sys, time',
          'sys.stdout.write("token: sk-live-")',
          'sys.stdout.flush()',
          'time.sleep(0.3)',
          'sys.stdout.write("0123456789\\n")',
          'sys.stderr.write("line one\\nline")',
          'sys.stderr.flush()',
          'time.sleep(0.3)',
          'sys.stderr.write(" two\\n")',
        ].join('\n'),
      },
    });
    const masker = new Masker();
    masker.add('sk-live-0123456789');
    masker.add('line one\nline two');
    const { log, tail } = await runStage('python3 leak.py', masker);
    expect(log).toBe('token: ***\n***\n***\n');
    expect(tail).toBe(log);
  });

  test('a Python stage reports metrics, ::error annotations and its traceback', async () => {
    repo = await makeRepo({
      commit: false,
      files: {
        'ml/pkg/__init__.py': '',
        'ml/pkg/mod.py': 'def inner(x):\n    return x / 0\n',
        'ml/train.py': [
          'from pkg.mod import inner',
          'for loss in (0.9, 0.5):',
          '    print(f"::metric name=loss::{loss}")',
          'print("::error file=train.py,line=3::loss is still high")',
          'inner(1)',
        ].join('\n'),
      },
    });
    const { result, annotations, metrics, log } = await runStage('python3 train.py');
    expect(result.exitCode).toBe(1);
    expect(metrics.map(({ step, value }) => [step, value])).toEqual([
      [0, 0.9],
      [1, 0.5],
    ]);
    expect(log).toContain('::error file=train.py,line=3::loss is still high\n');
    expect(annotations).toEqual([
      {
        stage: 'train',
        path: 'ml/train.py',
        line: 3,
        level: 'error',
        message: 'loss is still high',
        title: null,
      },
      {
        stage: 'train',
        path: 'ml/pkg/mod.py',
        line: 2,
        level: 'error',
        message: 'ZeroDivisionError: division by zero',
        title: 'ZeroDivisionError in ml/pkg/mod.py',
      },
    ]);
  });
});
