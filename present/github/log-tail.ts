/** A log line longer than this is cut in a summary (a progress bar redrawn on one line). */
const LINE_CHARS = 1_000;

/** The last `maxLines` lines of a log, long lines cut, and a phrase saying what was cut. */
export function logTail(log: string, maxLines: number): { text: string; cut: string } {
  const all = log.replace(/\r\n/g, '\n').replace(/\n+$/, '').split('\n');
  const kept = all.slice(-maxLines);
  let cutLong = 0;
  const lines = kept.map((line) => {
    if (line.length <= LINE_CHARS) return line;
    cutLong += 1;
    return `${line.slice(0, LINE_CHARS)} … (${(line.length - LINE_CHARS).toLocaleString('en-US')} characters cut)`;
  });
  const cuts = [
    all.length > kept.length ? `${(all.length - kept.length).toLocaleString('en-US')} earlier lines cut` : '',
    cutLong ? `${cutLong} long ${cutLong === 1 ? 'line' : 'lines'} shortened` : '',
  ].filter(Boolean);
  return { text: lines.join('\n').trim() === '' ? '' : lines.join('\n'), cut: cuts.join(', ') };
}
