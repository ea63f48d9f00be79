import type { KeyInputs } from '../../schemas/key-inputs.js';
import type { MetricPoint } from '../../schemas/metric-point.js';
import type { StageRecord } from '../../schemas/stage-record.js';
import { MASK, type Masker } from './masker.js';

/** A content digest as key inputs hold them: hex sha256, bare or as a blob digest. */
const DIGEST = /^(?:sha256:)?[0-9a-f]{64}$/;

/**
 * A stage's record with every text that can carry what the stage wrote or named masked, as
 * its log lines are (DESIGN §7): its error and warnings (which quote its metrics and plot
 * files), its notes, the names of its metrics (a metrics file's keys are the stage's to
 * choose), why it re-ran and what changed while it ran (which name the files it created
 * or read: `<secret>.py added`), and its key inputs (its read set names every file it
 * tried to open, its command holds its params' values). A stage whose key inputs hold a
 * secret gets no cache key: an entry of masked inputs would not hash to its key, and the
 * real ones must not be stored. Numbers, digests and paths from the pipeline are left as
 * they are.
 */
export function maskStageRecord(masker: Masker, record: StageRecord): StageRecord {
  const keyInputs = record.keyInputs === null ? null : maskKeyInputs(masker, record.keyInputs);
  const secretInKey = keyInputs !== null && keyInputs.masked;
  return {
    ...record,
    cacheKey: secretInKey && record.status === 'ran' ? null : record.cacheKey,
    keyInputs: keyInputs?.inputs ?? null,
    reasons: record.reasons.map((reason) => masker.mask(reason)),
    dirtyReasons: record.dirtyReasons.map((reason) => masker.mask(reason)),
    error: record.error === null ? null : masker.mask(record.error),
    warnings: record.warnings.map((warning) => masker.mask(warning)),
    notes: [
      ...record.notes.map((note) => masker.mask(note)),
      ...(secretInKey && record.status === 'ran'
        ? [`${record.name}: its key inputs hold a secret (shown as ***): its result is not cached`]
        : []),
    ],
    metrics: Object.fromEntries(
      Object.entries(record.metrics).map(([name, value]) => [masker.mask(name), value]),
    ),
  };
}

/** Points read from a stage's plot files, their series' names (a file's column headers) masked. */
export function maskMetricPoints(masker: Masker, points: readonly MetricPoint[]): MetricPoint[] {
  return points.map((point) => ({ ...point, name: masker.mask(point.name) }));
}

/**
 * A code manifest (the `(path, blob id)` list behind a code digest, stored as a blob that
 * "why it re-ran" reads) with its paths masked: a stage may create a file named after a
 * secret where the code digest sees it. Only names change; the digest is not made from it.
 */
export function maskCodeManifest(
  masker: Masker,
  entries: readonly (readonly [string, string])[],
): [string, string][] {
  return entries.map(([path, id]) => [masker.mask(path), id]);
}

/** Key inputs with every text in them masked, names and values alike, and whether any secret was found. */
function maskKeyInputs(masker: Masker, inputs: KeyInputs): { inputs: KeyInputs; masked: boolean } {
  let masked = false;
  const text = (value: string) => {
    // A digest carries no text of the stage's: a short secret (`1`) inside its hex digits is
    // chance, and masking it would leave every stage uncached. Only a digest that is itself
    // a secret is masked.
    if (DIGEST.test(value)) {
      if (masker.mask(value) !== MASK) return value;
      masked = true;
      return MASK;
    }
    const shown = masker.mask(value);
    if (shown !== value) masked = true;
    return shown;
  };
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return text(value);
    if (Array.isArray(value)) return value.map(walk);
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([name, inner]) => [text(name), walk(inner)]));
    }
    return value;
  };
  // Every field keeps its type: strings stay strings, records stay records.
  return { inputs: walk(inputs) as KeyInputs, masked };
}
