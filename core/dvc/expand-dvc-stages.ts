import { DvcTemplateError, resolveTemplate, scalarText, type TemplateContext } from './dvc-template.js';

/** One stage of a `foreach` or `matrix` group, or a plain stage: its name, body and loop values. */
export interface ExpandedStage {
  /** DVC's name: `train`, `train@small`, `stage@0-1`. */
  name: string;
  /** The stage body, still templated. */
  body: Record<string, unknown>;
  /** `item` (and `key` for a dictionary's foreach) for the body's templating. */
  loop: Record<string, unknown>;
}

const isComposite = (value: unknown): boolean => value !== null && typeof value === 'object';

/**
 * The most stages a `dvc.yaml` makes, its plain stages and its `foreach` and `matrix` groups'
 * together.
 * A matrix's stages are the product of its lists: eight lists of ten, a few hundred bytes
 * of a pull request's `dvc.yaml`, would be a hundred million stages, which the control
 * plane reads (before any approval) until it runs out of memory. Counted before any is made.
 */
export const MAX_DVC_STAGES = 1000;

/**
 * Expands a stage definition as DVC does (dvc/parsing/__init__.py): `foreach` over a
 * dictionary names each stage `name@key`; over a list of scalars `name@value`; over a list
 * holding a list or dictionary `name@index`. `matrix` makes the product of its lists (first
 * key varying slowest), each part of the name the value, or `key` + index for a list or
 * dictionary value, joined by `-`: `stage@0-1`, `stage1@linux-3.9-dict0`.
 */
export function expandDvcStage(
  name: string,
  definition: Record<string, unknown>,
  context: TemplateContext,
  /** How many stages it may make: more is a DvcTemplateError naming how many it would. */
  limit: number = MAX_DVC_STAGES,
): ExpandedStage[] {
  if ('foreach' in definition) {
    const { foreach, do: body, ...rest } = definition;
    if (Object.keys(rest).length > 0) {
      throw new DvcTemplateError(
        `foreach takes only "do" beside it, found ${Object.keys(rest)
          .map((key) => `"${key}"`)
          .join(', ')}`,
      );
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new DvcTemplateError('foreach needs "do" with the stage to repeat');
    }
    const iterable = resolveTemplate(foreach, context).value;
    if (Array.isArray(iterable) || (iterable !== null && typeof iterable === 'object')) {
      tooMany(Object.keys(iterable).length, limit, 'foreach');
    }
    return foreachEntries(iterable).map(([key, item, isDictionary]) => ({
      name: `${name}@${key}`,
      body: body as Record<string, unknown>,
      loop: isDictionary ? { key, item } : { item },
    }));
  }
  if ('matrix' in definition) {
    const { matrix, ...body } = definition;
    const resolved = resolveTemplate(matrix, context).value;
    if (resolved === null || typeof resolved !== 'object' || Array.isArray(resolved)) {
      throw new DvcTemplateError('matrix expects a dictionary of lists');
    }
    let count = 1;
    for (const [key, values] of Object.entries(resolved)) {
      if (!Array.isArray(values)) throw new DvcTemplateError(`matrix.${key}: expected a list`);
      count *= values.length;
    }
    tooMany(count, limit, 'matrix');
    let combos: { parts: string[]; item: Record<string, unknown> }[] = [{ parts: [], item: {} }];
    for (const [key, values] of Object.entries(resolved) as [string, unknown[]][]) {
      combos = combos.flatMap((combo) =>
        values.map((value, index) => ({
          parts: [...combo.parts, isComposite(value) ? `${key}${index}` : scalarText(value)],
          item: { ...combo.item, [key]: value },
        })),
      );
    }
    return combos.map(({ parts, item }) => ({ name: `${name}@${parts.join('-')}`, body, loop: { item } }));
  }
  return [{ name, body: definition, loop: {} }];
}

function tooMany(count: number, limit: number, what: 'foreach' | 'matrix'): void {
  if (count <= limit) return;
  throw new DvcTemplateError(
    `${what} makes ${count.toLocaleString('en-US')} stages; a dvc.yaml makes at most ${MAX_DVC_STAGES.toLocaleString('en-US')} in all${limit < MAX_DVC_STAGES ? ` (${limit.toLocaleString('en-US')} left after the stages before it)` : ''}`,
  );
}

function foreachEntries(iterable: unknown): [string, unknown, boolean][] {
  if (Array.isArray(iterable)) {
    const byIndex = iterable.some(isComposite);
    return iterable.map((item, index) => [byIndex ? String(index) : scalarText(item), item, false]);
  }
  if (iterable !== null && typeof iterable === 'object') {
    return Object.entries(iterable).map(([key, item]) => [key, item, true]);
  }
  throw new DvcTemplateError('foreach expects a list or a dictionary');
}
