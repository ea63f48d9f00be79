import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ulid } from 'ulid';
import type { ParamValue } from '../../schemas/key-inputs.js';
import { digestOf, sha256Hex } from '../../schemas/canonical-json.js';
import { LocalRunRecorder } from '../../local/local-run-recorder.js';
import { openLocalState } from '../../local/local-state.js';
import { readRunJournal } from '../../local/read-run-journal.js';
import { runFromJson } from '../../store/run-from-json.js';

/** What one earlier run differs in from the store's first run. */
export interface EarlierRun {
  params: Record<string, ParamValue>;
  commit: string | null;
}

/**
 * Records `count` earlier runs in a project's local store through the recorder that
 * `fluksio run` uses, fast: each replays the journaled events of the store's first run
 * (stage records, points, annotations) with the params and commit `vary(i)` gives and
 * cache keys of its own, then succeeds. The journal, the cache index and the baseline
 * index grow as with real runs; returns the runs' ids, oldest first.
 */
export async function recordEarlierRuns(
  stateDir: string,
  count: number,
  vary: (index: number, first: EarlierRun) => EarlierRun,
): Promise<string[]> {
  const state = await openLocalState(stateDir);
  try {
    const [firstFile] = (await readdir(state.journalDir)).filter((name) => name.endsWith('.jsonl')).sort();
    const template = await readRunJournal(join(state.journalDir, firstFile ?? 'none'));
    const created = template.records[0];
    if (created?.type !== 'run.created') throw new Error(`${stateDir} has no first run to replay`);
    const events = template.records.flatMap((record) => (record.type === 'run.events' ? record.events : []));
    const finished = template.records.find((record) => record.type === 'run.finished');
    const metrics = finished?.type === 'run.finished' ? finished.metrics : {};
    const base = runFromJson(created.run);
    const ids: string[] = [];
    for (let i = 0; i < count; i += 1) {
      const { params, commit } = vary(i, { params: base.params, commit: base.commit });
      const now = new Date();
      const recorder = await LocalRunRecorder.start({
        journalDir: state.journalDir,
        index: state.index,
        run: {
          ...base,
          id: ulid(),
          commit,
          params,
          paramsDigest: digestOf(params),
          createdAt: now,
          startedAt: now,
          queuedAt: now,
        },
      });
      for (const { seq: _seq, ...event } of events) {
        recorder.events.emit(
          event.type === 'stage.finished' && event.stage.cacheKey
            ? {
                ...event,
                stage: {
                  ...event.stage,
                  // A key of its own, and no read set: a replayed entry is history to look
                  // through, never a candidate a traced stage could restore.
                  cacheKey: sha256Hex(`${event.stage.cacheKey} ${i}`),
                  keyInputs: event.stage.keyInputs && { ...event.stage.keyInputs, readSet: null },
                },
              }
            : event,
        );
      }
      await recorder.events.flush();
      await recorder.finish({
        status: 'succeeded',
        reason: null,
        dirtyReasons: [],
        metrics,
        baselineRunId: null,
      });
      ids.push(recorder.runId);
    }
    return ids;
  } finally {
    await state.close();
  }
}
