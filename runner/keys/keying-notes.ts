import { posix } from 'node:path';
import type { KeyInputs } from '../../schemas/key-inputs.js';

/** Files a note names before it counts the rest. */
const NAMED_FILES = 3;
/** Python source and extension modules: code it imported, which is expected to be undeclared. */
const MODULE = /\.(?:py|pyw|so|pyd)$/;

/**
 * What the summary says about how a stage was keyed (issue 8, "Precision"): the files a
 * traced stage read that are not among its deps (`train read conf/x.json, which is not
 * among its deps` — modules it imported are code, not named), or why a stage's reads were
 * not traced and what it is keyed on instead. Paths are relative to the pipeline's
 * directory, as the user wrote them.
 */
export function keyingNotes(
  stage: string,
  inputs: KeyInputs | null,
  where: {
    /** The pipeline's directory in the repository; '' at the root. */
    pipelineDirInRepo: string;
    /** Whether the stage or the pipeline has `code` globs (they replace the whole code). */
    codeGlobs: boolean;
  },
): string[] {
  if (inputs === null) return [];
  if (inputs.untraced !== null) {
    const scope = where.codeGlobs ? 'its code globs' : "the repository's whole code";
    return [`${stage}: not traced (${inputs.untraced}): keyed on ${scope}`];
  }
  if (inputs.readSet === null) return [];
  // A file it looked for and did not find is keyed as absent, but cannot be declared.
  const undeclared = Object.entries(inputs.readSet.files)
    .filter(([file, digest]) => digest !== null && !MODULE.test(file))
    .map(([file]) => file)
    .map((file) => posix.relative(where.pipelineDirInRepo || '.', file) || file)
    .sort();
  if (undeclared.length === 0) return [];
  const named = undeclared.slice(0, NAMED_FILES);
  const rest = undeclared.length - named.length;
  const list =
    rest > 0
      ? `${named.join(', ')} and ${rest} more ${rest === 1 ? 'file' : 'files'}`
      : named.length === 1
        ? named[0]
        : `${named.slice(0, -1).join(', ')} and ${named.at(-1)}`;
  return [`${stage} read ${list}, which ${undeclared.length === 1 ? 'is' : 'are'} not among its deps`];
}
