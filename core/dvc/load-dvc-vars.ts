import type { Problem } from '../problem.js';
import { parseDvcParamsFile } from './dvc-params.js';
import type { TemplateContext } from './dvc-template.js';

/**
 * Reads a file a `dvc.yaml` names, for the field `at`: its text, undefined when there is
 * none, or null when it was refused (the problem already said why).
 */
export type ProjectFileReader = (path: string, at: string) => string | null | undefined;

/**
 * Adds a `vars` list to a templating context as DVC does: a dictionary's keys, or a file's
 * (`file.yaml`, or only some keys with `file.yaml:a,b`). params.yaml is already loaded, so
 * naming it again adds nothing; defining a name twice is a problem, as in DVC. Values
 * from `vars` are fixed: only params.yaml's are params a run can set.
 */
export function loadDvcVars(
  vars: readonly unknown[],
  context: TemplateContext,
  at: string,
  readFile: ProjectFileReader,
  problems: Problem[],
): TemplateContext {
  const data: Record<string, unknown> = { ...context.data };
  const define = (values: Record<string, unknown>, where: string) => {
    for (const [key, value] of Object.entries(values)) {
      if (Object.hasOwn(data, key)) {
        problems.push({ path: where, message: `cannot redefine "${key}": it is already defined` });
        continue;
      }
      data[key] = value;
    }
  };
  vars.forEach((entry, index) => {
    const where = `${at}[${index}]`;
    if (entry !== null && typeof entry === 'object' && !Array.isArray(entry)) {
      define(entry as Record<string, unknown>, where);
      return;
    }
    if (typeof entry !== 'string') {
      problems.push({ path: where, message: 'expected a file name or a dictionary' });
      return;
    }
    const [fileName = '', keyList] = entry.split(':');
    if (fileName === 'params.yaml' && keyList === undefined) return;
    const text = readFile(fileName, where);
    if (text === null) return;
    if (text === undefined) {
      problems.push({ path: where, message: `${fileName} does not exist` });
      return;
    }
    let values: Record<string, unknown>;
    try {
      values = parseDvcParamsFile(text).data;
    } catch (error) {
      problems.push({ path: where, message: `${fileName}: ${(error as Error).message}` });
      return;
    }
    if (keyList !== undefined) {
      const keys = keyList.split(',').map((key) => key.trim());
      const missing = keys.filter((key) => !Object.hasOwn(values, key));
      if (missing.length > 0)
        problems.push({ path: where, message: `${fileName} has no ${missing.join(', ')}` });
      values = Object.fromEntries(
        keys.filter((key) => Object.hasOwn(values, key)).map((key) => [key, values[key]]),
      );
    }
    if (fileName === 'params.yaml') return;
    define(values, where);
  });
  return { data, params: context.params };
}
