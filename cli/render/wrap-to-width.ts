import wrapAnsi from 'wrap-ansi';

/**
 * A line broken at blanks (a word longer than `width` is cut) so that none passes the
 * terminal's edge; a pipe's infinite width keeps it whole.
 */
export function wrapToWidth(line: string, width: number): string {
  return Number.isFinite(width) ? wrapAnsi(line, width, { hard: true }) : line;
}
