import { readCodeIndex, type CodeIndex } from './code-index.js';

/**
 * The run's view of the working tree's code, fresh whenever a stage may have changed it
 * (issue 8, defect 1). A stage's key must say what the stage will read, so it is computed
 * from an index read after the last stage process ran; while no process has run since the
 * last read — a run whose stages are all cached — that read is reused instead of asking
 * git again. An index read while a process was running is used once and not reused.
 */
export class CodeView {
  /** Bumped whenever a stage process starts or ends: a read from an older epoch may be stale. */
  private epoch = 0;
  private running = 0;
  private current: { index: CodeIndex; epoch: number } | null;
  /** The stat cache the initial read used: a runner keeps it outside the checkout. */
  private readonly statCacheFile: string | null;
  /** Whether the initial read distrusted the repository's config: every read again does. */
  private readonly distrustRepositoryConfig: boolean;

  /**
   * @param repoRoot the work tree to read
   * @param initial the index read when the run started (after the store's lock was taken)
   */
  constructor(
    private readonly repoRoot: string,
    initial: CodeIndex,
  ) {
    this.current = { index: initial, epoch: 0 };
    this.statCacheFile = initial.statCacheFile;
    this.distrustRepositoryConfig = initial.distrustsRepositoryConfig ?? false;
  }

  /** The code as it is now. */
  async fresh(): Promise<CodeIndex> {
    if (this.current && this.current.epoch === this.epoch && this.running === 0) return this.current.index;
    return this.read();
  }

  /** Reads the index again, whatever is known: what a stage's after-check compares. */
  async read(): Promise<CodeIndex> {
    const epoch = this.epoch;
    const quiet = this.running === 0;
    const index = await readCodeIndex(this.repoRoot, {
      statCacheFile: this.statCacheFile,
      distrustRepositoryConfig: this.distrustRepositoryConfig,
    });
    if (quiet && this.running === 0 && this.epoch === epoch) this.current = { index, epoch };
    return index;
  }

  /** Around each stage process: `const done = view.processStarted(); … done()`. */
  processStarted(): () => void {
    this.epoch += 1;
    this.running += 1;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.epoch += 1;
      this.running -= 1;
    };
  }
}
