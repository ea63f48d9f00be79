import pc from 'picocolors';
import { expect, test } from 'vitest';
import { ProgressPrinter } from '../../present/terminal/progress-printer.js';

// A stage's progress bar (tqdm, Keras, a `\r` loop) redraws one line many times a second.
// On a terminal fluksio shows it as the stage drew it, one line; in a pipe, each state.

const colors = pc.createColors(false);
const bar = (step: number) => `progress ${step}/3 [${'#'.repeat(step)}${' '.repeat(3 - step)}]`;

/** What a terminal shows after `text`: `\r` back to the line's start, `ESC[2K` erasing it. */
function screen(text: string): string[] {
  const rows: string[] = [''];
  // eslint-disable-next-line no-control-regex
  for (const token of text.split(/(\r|\n|\u001b\[2K)/)) {
    if (token === '\n') rows.push('');
    else if (token === '\r')
      continue; // every \r here comes before ESC[2K or a redraw
    else if (token === '\u001b[2K') rows[rows.length - 1] = '';
    else rows[rows.length - 1] += token;
  }
  return rows;
}

function printed(live: boolean, columns?: number): string {
  let text = '';
  const printer = new ProgressPrinter((chunk) => (text += chunk), colors, ['train'], true, live, columns);
  printer.emit({ type: 'stage.started', stage: 'train', at: '2026-01-01T00:00:00.000Z' });
  printer.emit({ type: 'stage.log', stage: 'train', lines: ['loading'] });
  printer.emit({ type: 'stage.log', stage: 'train', lines: [`${bar(1)}\r`, `${bar(2)}\r`] });
  printer.emit({ type: 'stage.log', stage: 'train', lines: [bar(3), 'done'] });
  return text;
}

test('on a terminal a \\r progress bar is one line, redrawn, not a line per state', () => {
  expect(screen(printed(true))).toEqual([
    '▸ train',
    '  train │ loading',
    `  train │ ${bar(3)}`,
    '  train │ done',
    '',
  ]);
});

test('on a terminal a state wider than the terminal is cut to its width, so erasing it erases all of it', () => {
  const text = printed(true, 16);
  expect(screen(text)).toEqual(['▸ train', '  train │ loading', `  train │ ${bar(3)}`, '  train │ done', '']);
  // The redrawn states, each cut to 15 columns (a full-width line would wrap and stay).
  const states = text
    .split('\u001b[2K')
    .map((part) => part.replace(/\r$/, ''))
    .filter((part) => part.includes('progr') && !part.includes('\n'));
  expect(states).toEqual(['  train │ progr', '  train │ progr']);
});

test('in a pipe every state of the bar is a line of the log, as a CI log keeps it', () => {
  expect(printed(false).split('\n')).toEqual([
    '▸ train',
    '  train │ loading',
    `  train │ ${bar(1)}`,
    `  train │ ${bar(2)}`,
    `  train │ ${bar(3)}`,
    '  train │ done',
    '',
  ]);
});
