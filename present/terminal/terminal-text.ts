/* eslint-disable no-control-regex -- matching control characters is what this file is for */
/**
 * Escape sequences and control characters, as ECMA-48 defines them: CSI (`ESC [` or
 * 0x9B … final byte), OSC (`ESC ]` or 0x9D … BEL or ST), DCS/SOS/PM/APC strings (… ST),
 * other `ESC` sequences, and the remaining C0 and C1 controls except tab and newline.
 * An unterminated string runs to the end of the text, as a terminal would swallow it.
 */
const ESCAPES =
  /(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)?|\x1b[ -/]*[0-~]?|[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/** Select Graphic Rendition in its 7-bit form: colours and bold, nothing else. */
const SGR = /^\x1b\[[0-9;:]*m$/;

/**
 * A stage's output made safe to print on the user's terminal (`fluksio run`, `show
 * --log`): its colours (SGR) stay, every other escape sequence and control character
 * goes. Output comes from code in a repository, and a terminal obeys what it prints: an
 * OSC sequence can set the window title or clipboard, write hyperlinks that lie, or (in
 * some terminals) run commands; cursor movement and `\r` can paint over what was printed.
 */
export function terminalText(text: string): string {
  return text.replace(ESCAPES, (sequence) => (SGR.test(sequence) ? sequence : ''));
}
