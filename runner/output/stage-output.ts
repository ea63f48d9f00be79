import type { Annotation } from '../../schemas/annotation.js';
import type { MetricPoint } from '../../schemas/metric-point.js';
import { LogTail, type LogTailOptions } from './log-tail.js';
import type { Masker } from './masker.js';
import {
  innermostRepoFrame,
  parseTracebacks,
  repoRelativePath,
  type ParsedTraceback,
} from '../../core/traceback.js';
import { parseWorkflowCommand, type WorkflowCommand } from './workflow-command.js';
import { logText } from './log-text.js';
import { DEFAULT_LOG_LIMIT } from '../../schemas/log-limit.js';
import { formatBytes } from '../../core/text/format.js';
import { logLineBytes } from '../../core/text/log-line-bytes.js';
import { StageOutputLimits, type Admission } from './stage-output-limits.js';

export interface StageOutputOptions {
  stage: string;
  /** Shared by the run's stages: a mask one stage adds hides the value in later ones too. */
  masker: Masker;
  /** The directory the command runs in: relative `file=` paths start there. Absolute. */
  cwd: string;
  /** Annotation paths are made relative to it. Absolute. */
  repoRoot: string;
  /** Each line that goes into the log, masked. */
  onLog(line: string): void;
  onMetric(point: MetricPoint): void;
  onAnnotation(annotation: Annotation): void;
  /** Bounds of the tail `finish()` returns. */
  tail?: LogTailOptions;
  /**
   * The most bytes of the log kept, as logText writes it (the stage's `log_limit`). Past
   * it the stage runs on and its plain text is dropped: one line says so when it happens,
   * another how much was dropped when the output ends. Workflow commands are still read
   * (a `::metric` point or an `::error` is a result, and small), and the tail and the
   * tracebacks still follow the output's end, which is what explains a failure.
   * @defaultValue DEFAULT_LOG_LIMIT (64 MiB)
   */
  maxLogBytes?: number;
  /**
   * The most metrics (distinct names) one stage reports: a point of a name past it is
   * ignored, saying so once. A loop printing `::metric name=x{i}` must not grow the run's
   * metrics, and the store's series, without end.
   * @defaultValue MAX_STAGE_METRICS (1,000, stage-output-limits.ts)
   */
  maxMetrics?: number;
  /**
   * The most metric points one stage reports: past it the series stop growing, saying so
   * once, and each metric's final value still follows the last point printed.
   * @defaultValue MAX_STAGE_METRIC_POINTS (1,000,000: 100,000 steps of 10 metrics)
   */
  maxMetricPoints?: number;
  /**
   * The most `::error`, `::warning` and `::notice` annotations one stage reports: past it
   * they stay in the log only, saying so once. The annotations of the stage's tracebacks
   * are always reported: they explain a failure.
   * @defaultValue MAX_STAGE_ANNOTATIONS (1,000)
   */
  maxAnnotations?: number;
}

/** What a stage's output came to, once it is complete. */
export interface StageOutputSummary {
  /** The end of the log (see LogTail). */
  tail: string;
  /** Tracebacks found in the log, stdout's before stderr's. */
  tracebacks: ParsedTraceback[];
}

const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i;
const NON_FINITE = /^[+-]?(?:nan|inf|infinity)$/i;

/**
 * Turns a stage's output lines into its log, metric points and annotations (DESIGN §7).
 * Every line is masked first, so no command can reveal a secret. On stdout, workflow
 * commands are understood: `::metric` becomes a point, `::error`/`::warning`/`::notice`
 * an annotation (and stay in the log), `::add-mask` a new secret, and
 * `::stop-commands::TOKEN` turns parsing off until `::TOKEN::`; on stderr only `::add-mask` is
 * read, the rest is logged.
 * `finish()` reads the whole log for Python and Node tracebacks and annotates each at
 * its innermost frame in the repository. The log is capped at `maxLogBytes`: a stage
 * printing without end is neither stopped nor blocked, its text past the cap is dropped.
 */
export class StageOutput {
  private readonly tail: LogTail;
  /** Every logged line, for `fullLog()` and the tracebacks. */
  private readonly logged: { stream: 'stdout' | 'stderr'; line: string }[] = [];
  /** How many points of each metric this stage emitted: the default next step. */
  private readonly emitted = new Map<string, number>();
  /** Each metric's last value, past the points limit too. */
  private readonly finals: Record<string, number> = {};
  private readonly limits: StageOutputLimits;
  /** While set, stdout is plain text until a `::<token>::` line. */
  private stopToken: string | null = null;

  /** Per stream, the raw end of a long line's piece that waits for the next piece. */
  private readonly heldBack = { stdout: '', stderr: '' };

  private readonly maxLogBytes: number;
  /** Bytes of the log kept so far, the lines fluksio adds about the limit not counted. */
  private logBytes = 0;
  /** Whether the log reached its limit: plain text is dropped from then on. */
  private capped = false;
  /** What was dropped past the limit. */
  private readonly dropped = { bytes: 0, lines: 0 };
  /** Per stream, the end of what was dropped, bounded as the tail is: its tracebacks still count. */
  private readonly droppedEnd = { stdout: new LogTail(), stderr: new LogTail() };

  constructor(private readonly options: StageOutputOptions) {
    this.tail = new LogTail(options.tail);
    this.maxLogBytes = options.maxLogBytes ?? DEFAULT_LOG_LIMIT;
    if (!Number.isSafeInteger(this.maxLogBytes) || this.maxLogBytes < 1) {
      throw new Error(`maxLogBytes must be a positive integer, got ${this.maxLogBytes}`);
    }
    this.limits = new StageOutputLimits({
      metrics: options.maxMetrics,
      points: options.maxMetricPoints,
      annotations: options.maxAnnotations,
    });
  }

  /**
   * Takes one line of the stage's output, or with `continues` a piece of a longer one:
   * the end of a piece that could begin a secret is held back and joined to the next, so
   * that a secret straddling the cut is masked whole (Masker.safePrefixLength).
   */
  push(stream: 'stdout' | 'stderr', piece: string, continues = false): void {
    const text = this.heldBack[stream] + piece;
    const cut = continues ? this.options.masker.safePrefixLength(text) : text.length;
    this.heldBack[stream] = text.slice(cut);
    if (cut > 0 || !continues) this.pushLine(stream, text.slice(0, cut));
  }

  private pushLine(stream: 'stdout' | 'stderr', rawLine: string): void {
    const line = this.options.masker.mask(rawLine);
    const parsed = parseWorkflowCommand(line);
    // Commands are read on stdout, and `::add-mask::` on stderr too, as GitHub Actions reads
    // it there: a script that keeps its stdout clean registers its secret on stderr, and
    // neither that line nor the value printed after it may show the secret.
    const command =
      stream === 'stdout' || (this.stopToken === null && parsed?.name.toLowerCase() === 'add-mask')
        ? parsed
        : null;
    if (this.stopToken !== null && stream === 'stdout') {
      if (command?.name === this.stopToken) this.stopToken = null;
      else this.log(stream, line);
      return;
    }
    if (command === null) {
      this.log(stream, line);
      return;
    }
    // Command names are case-insensitive, as in GitHub Actions.
    const name = command.name.toLowerCase();
    // Unescaped, a value may spell a secret the line held escaped only partly (`%3A` alone).
    const unescaped = {
      ...command,
      properties: Object.fromEntries(
        Object.entries(command.properties).map(([key, value]) => [key, this.options.masker.mask(value)]),
      ),
      value: this.options.masker.mask(command.value),
    };
    if (name === 'metric') {
      this.metric(unescaped, line);
    } else if (name === 'add-mask') {
      // From the unmasked line: a new secret that contains a known one must be added
      // whole. This line is never logged.
      this.options.masker.add(parseWorkflowCommand(rawLine)?.value ?? command.value);
    } else if (name === 'stop-commands' && command.value !== '') {
      this.stopToken = command.value;
    } else {
      if (isAnnotationLevel(name)) this.annotate(unescaped, name);
      this.log(stream, line);
    }
  }

  /** Each metric's last value printed (of the metrics kept), by name. */
  metricFinals(): Record<string, number> {
    return { ...this.finals };
  }

  /** The whole log so far, as logText writes it. */
  fullLog(): string {
    return logText(this.logged.map(({ line }) => line));
  }

  /**
   * Ends the output: finds the tracebacks in the log (each stream on its own, so that
   * interleaved output cannot split one) and in the end of what the log limit dropped,
   * reports an `error` annotation for each, says how much was dropped, and returns the
   * tracebacks with the log's tail. Call it once, after the last line.
   */
  finish(): StageOutputSummary {
    const lines = (stream: 'stdout' | 'stderr') =>
      this.logged.filter((entry) => entry.stream === stream).map((entry) => entry.line);
    const where = { cwd: this.options.cwd, repoRoot: this.options.repoRoot };
    const tracebacks = (['stdout', 'stderr'] as const).flatMap((stream) => [
      ...parseTracebacks(lines(stream), where),
      ...parseTracebacks(this.droppedEnd[stream].keptLines(), where),
    ]);
    if (this.capped) {
      this.record(
        'stdout',
        `fluksio: dropped ${this.dropped.bytes} bytes (${this.dropped.lines} lines) of output past the log limit of ${formatBytes(this.maxLogBytes)}`,
      );
    }
    for (const line of this.limits.endLines()) this.record('stdout', line);
    // A traceback printed twice (logged, then raised again) is one problem in the code.
    // KeyboardInterrupt is the SIGINT fluksio sends to stop a stage (Ctrl-C, a timeout, a
    // cancel), not a problem in the code: it gets no annotation.
    const seen = new Set<string>();
    for (const traceback of tracebacks.filter((each) => !isInterrupt(each))) {
      const annotation = this.tracebackAnnotation(traceback);
      const key = JSON.stringify([annotation.path, annotation.line, annotation.message]);
      if (!seen.has(key)) this.options.onAnnotation(annotation);
      seen.add(key);
    }
    return { tail: this.tail.text(), tracebacks };
  }

  /** Logs a line, or past the log limit drops it (the tail still shows it). */
  private log(stream: 'stdout' | 'stderr', line: string): void {
    const bytes = logLineBytes(line);
    if (!this.capped && this.logBytes + bytes > this.maxLogBytes) {
      this.capped = true;
      this.record(
        stream,
        `fluksio: this stage's log reached its limit of ${formatBytes(this.maxLogBytes)} (log_limit): the rest of its output is dropped, its ::metric and other workflow commands still read`,
      );
    }
    if (!this.capped) {
      this.logBytes += bytes;
      this.record(stream, line);
      return;
    }
    this.dropped.bytes += bytes;
    this.dropped.lines += 1;
    this.tail.push(line);
    this.droppedEnd[stream].push(line);
  }

  private record(stream: 'stdout' | 'stderr', line: string): void {
    this.logged.push({ stream, line });
    this.tail.push(line);
    this.options.onLog(line);
  }

  private metric(command: WorkflowCommand, line: string): void {
    const metric = readMetric(command);
    if (typeof metric === 'string') {
      this.log('stdout', `fluksio: ignored ${line}: ${metric}`);
      return;
    }
    const count = this.emitted.get(metric.name);
    if (!this.admitted(this.limits.metric(metric.name, this.emitted.size, count === undefined))) return;
    this.emitted.set(metric.name, (count ?? 0) + 1);
    this.finals[metric.name] = metric.value;
    if (!this.admitted(this.limits.point())) return;
    this.options.onMetric({
      stage: this.options.stage,
      ...metric,
      step: metric.step ?? count ?? 0,
      at: Date.now(),
    });
  }

  /** Whether a limit admitted what the stage reported; the first refusal is said in the log and as a warning. */
  private admitted({ kept, notice }: Admission): boolean {
    if (notice !== null) this.limitReached(notice);
    return kept;
  }

  private limitReached(message: string): void {
    this.record('stdout', `fluksio: ${message}`);
    this.options.onAnnotation({
      stage: this.options.stage,
      path: null,
      line: null,
      level: 'warning',
      message,
      title: 'Limit reached',
    });
  }

  private annotate(command: WorkflowCommand, level: Annotation['level']): void {
    if (!this.admitted(this.limits.annotation(level))) return;
    const { file, line, title } = command.properties;
    const where = { cwd: this.options.cwd, repoRoot: this.options.repoRoot };
    this.options.onAnnotation({
      stage: this.options.stage,
      path: file === undefined || file === '' ? null : repoRelativePath(file, where),
      line: lineNumber(line),
      level,
      message: command.value,
      title: title ?? null,
    });
  }

  /** `ZeroDivisionError: division by zero` → titled `ZeroDivisionError in train.py`. */
  private tracebackAnnotation(traceback: ParsedTraceback): Annotation {
    const frame = innermostRepoFrame(traceback);
    const type = /^[^\s:]+/.exec(traceback.message)?.[0] ?? traceback.message;
    return {
      stage: this.options.stage,
      path: frame?.path ?? null,
      line: frame?.line ?? null,
      level: 'error',
      message: traceback.message,
      title: frame?.path ? `${type} in ${frame.path}` : type,
    };
  }
}

/** Whether a traceback ends in the KeyboardInterrupt that SIGINT raises in Python. */
function isInterrupt(traceback: ParsedTraceback): boolean {
  return /^KeyboardInterrupt\b/.test(traceback.message);
}

/** A metric's name is a key of the stored series: long enough for any real name. */
const MAX_METRIC_NAME = 200;
/** The largest line number stored (PostgreSQL's integer); a larger one pins no line. */
const MAX_LINE = 2_147_483_647;

/** An annotation's `line=` property as a line number, or null when it names none. */
function lineNumber(text: string | undefined): number | null {
  if (text === undefined || !/^\d+$/.test(text.trim())) return null;
  const line = Number(text);
  return line > 0 && line <= MAX_LINE ? line : null;
}

/** A `::metric` command's name, value and explicit step, or why it is no metric point. */
function readMetric(command: WorkflowCommand): { name: string; value: number; step: number | null } | string {
  const name = command.properties.name?.trim() ?? '';
  const step = command.properties.step?.trim();
  const text = command.value.trim();
  if (name === '') return 'it has no name= property';
  if (name.length > MAX_METRIC_NAME) return `its name is longer than ${MAX_METRIC_NAME} characters`;
  // `name=loss step=3`, properties written as a shell or logging library writes them: taken
  // as one name, every step would be a metric of its own ("loss step=3").
  const stray = /^(\S+)\s+([A-Za-z_]\w*=.*)$/.exec(name);
  if (stray) {
    const written = [stray[1], ...(stray[2] ?? '').split(/\s+/)].join(',');
    return `its name "${name}" holds another property: properties are separated by commas (name=${written})`;
  }
  if (NON_FINITE.test(text) || (DECIMAL.test(text) && !Number.isFinite(Number(text)))) {
    return `"${text}" is not a finite number`;
  }
  if (!DECIMAL.test(text)) return `"${text}" is not a number`;
  if (step !== undefined && !(/^\d+$/.test(step) && Number(step) <= Number.MAX_SAFE_INTEGER)) {
    return `step "${step}" is not a non-negative integer`;
  }
  return { name, value: Number(text), step: step === undefined ? null : Number(step) };
}

function isAnnotationLevel(name: string): name is Annotation['level'] {
  return name === 'error' || name === 'warning' || name === 'notice';
}
