/**
 * The bytes a logged line takes in a stage's log as logText writes it: its UTF-8 bytes and
 * a newline, none after a line ended by a lone `\r` (a progress bar's state). A runner's
 * `log_limit` and the control plane's FLUKSIO_MAX_STAGE_LOG both count lines so.
 */
export function logLineBytes(line: string): number {
  return Buffer.byteLength(line) + (line.endsWith('\r') ? 0 : 1);
}
