import { appendFile, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { logText } from '../runner/output/log-text.js';

/** Where a running local run's stage writes what it printed so far. */
export function liveStageLogFile(liveDir: string, runId: string, stage: string): string {
  return join(liveDir, runId, `${stage}.log`);
}

/**
 * The logs of a local run's stages while they run (`.fluksio/live/<run>/<stage>.log`), so
 * `fluksio ui` can follow a run another process is executing. Written as logText writes
 * the stored log, byte for byte, so a page that followed the live file goes on in the
 * stored one at the same offset; removed when the run ends (each stage's log is then a
 * blob). Appends are made in call order.
 */
export class LiveStageLogs {
  private writing: Promise<void> = Promise.resolve();
  private readonly made = new Set<string>();

  constructor(
    private readonly liveDir: string,
    private readonly runId: string,
  ) {}

  /** Appends a stage's new lines; a failure to write loses the live view only, never the run. */
  append(stage: string, lines: readonly string[]): Promise<void> {
    const text = logText(lines);
    this.writing = this.writing.then(async () => {
      try {
        if (!this.made.has(stage)) {
          await mkdir(join(this.liveDir, this.runId), { recursive: true });
          this.made.add(stage);
        }
        await appendFile(liveStageLogFile(this.liveDir, this.runId, stage), text);
      } catch {
        // The live view is a convenience: the stored log, written when the stage ends, is the record.
      }
    });
    return this.writing;
  }

  /** Removes the run's live logs once every append is done. */
  async remove(): Promise<void> {
    await this.writing;
    await rm(join(this.liveDir, this.runId), { recursive: true, force: true });
  }
}
