import { base64Forms } from './base64-forms.js';
import { MultiStringSearch } from './multi-string-search.js';

/** What a secret is replaced by in every log. */
export const MASK = '***';

/**
 * Hides secrets in log lines: the runner's configured secrets and values a stage
 * registers with `::add-mask::` (DESIGN §7). It works on whole lines — callers pass
 * only complete lines, so a secret a process writes in two pieces is still caught; a
 * line too long to hold whole comes in pieces, and `safePrefixLength` says how much of
 * one can be shown before the next arrives.
 * A multi-line secret is registered line by line, as GitHub Actions does, because a
 * log is read one line at a time. Each line is also masked as tools print it escaped, as
 * GitHub Actions' masker does: percent-encoded (a password in a URL), escaped in a JSON
 * string, escaped as a workflow command's message or property (`%25`, `%3A`, `%2C`,
 * which the stage's commands are unescaped from into annotations and metric names), and
 * in base64, on its own or inside longer base64 text (see base64Forms).
 */
export class Masker {
  /** Every form of every secret line. */
  private readonly forms = new MultiStringSearch();

  /**
   * Registers a secret; empty and whitespace-only values (and lines) are ignored. A line
   * with blanks around it (`TOKEN="s3cr3t "` in an env file, `::add-mask:: $TOKEN`) is also
   * registered without them, as GitHub Actions trims what `::add-mask::` registers: a shell
   * splitting `echo $TOKEN` unquoted, or a tool stripping it, prints the value without its
   * blanks, and that must be hidden too.
   */
  add(secret: string): void {
    for (const line of secret.split(/\r?\n/)) {
      const trimmed = line.trim();
      // Masking whitespace would mangle every line without hiding anything.
      if (trimmed === '') continue;
      for (const form of [...escapedForms(line), ...escapedForms(trimmed)]) this.forms.add(form);
    }
  }

  /**
   * For a piece of a line too long to hold whole (LineSplitter delivers those in pieces),
   * how many characters from its start can be masked and shown now: all but a tail that
   * could be the beginning of a secret the next piece completes, and never a cut through
   * a secret already there. The caller holds the rest back and puts it in front of the
   * next piece, so a secret straddling the cut is still masked whole.
   */
  safePrefixLength(piece: string): number {
    let cut = Math.max(0, piece.length - Math.max(0, this.forms.longest - 1));
    for (const [start, end] of this.coveredRanges(piece)) if (start < cut && end > cut) cut = start;
    // Never between the two halves of a surrogate pair.
    if (cut > 0 && cut < piece.length && /[\uD800-\uDBFF]/.test(piece.charAt(cut - 1))) cut -= 1;
    return cut;
  }

  /**
   * Returns the line with every occurrence of every secret replaced by `***`. Where
   * occurrences overlap or one secret contains another, the union of the characters
   * they cover becomes one `***`, so no part of any secret survives.
   */
  mask(line: string): string {
    if (this.forms.size === 0) return line;
    const covered = this.coveredRanges(line);
    if (covered.length === 0) return line;
    let masked = '';
    let from = 0;
    for (const [start, end] of covered) {
      masked += line.slice(from, start) + MASK;
      from = end;
    }
    return masked + line.slice(from);
  }

  /** The merged `[start, end)` ranges of the line covered by some secret, in order. */
  private coveredRanges(line: string): [number, number][] {
    const ranges = this.forms.occurrences(line);
    ranges.sort((a, b) => a[0] - b[0]);
    const merged: [number, number][] = [];
    for (const [start, end] of ranges) {
      const last = merged.at(-1);
      if (last !== undefined && start <= last[1]) last[1] = Math.max(last[1], end);
      else merged.push([start, end]);
    }
    return merged;
  }
}

/** A secret's line as it is written and as tools write it escaped (see Masker). */
function escapedForms(line: string): Set<string> {
  const message = line.replace(/%/g, '%25').replace(/\r/g, '%0D');
  const forms = new Set([line, message, message.replace(/:/g, '%3A').replace(/,/g, '%2C')]);
  forms.add(JSON.stringify(line).slice(1, -1));
  for (const form of base64Forms(line)) forms.add(form);
  try {
    forms.add(encodeURIComponent(line));
  } catch {
    // A lone surrogate has no percent-encoding: it is never printed so.
  }
  return forms;
}
