/**
 * cli-table3's border characters for a table without borders: aligned columns that paste
 * cleanly into an issue or a chat, `left` before each line and `middle` between columns.
 */
export function borderlessChars(left: string, middle: string) {
  return {
    top: '',
    'top-mid': '',
    'top-left': '',
    'top-right': '',
    bottom: '',
    'bottom-mid': '',
    'bottom-left': '',
    'bottom-right': '',
    left,
    'left-mid': '',
    mid: '',
    'mid-mid': '',
    right: '',
    'right-mid': '',
    middle,
  };
}
