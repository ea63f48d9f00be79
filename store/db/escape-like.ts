/** Text matched literally inside a LIKE pattern (PostgreSQL's default escape, `\`). */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, '\\$&');
}
