/**
 * Text with the credentials of every URL in it replaced by `***`
 * (`https://x-access-token:abc@github.com/o/r` → `https://***@github.com/o/r`). Clone
 * URLs are meant to carry none (credentials come as a header, DESIGN §6); this keeps
 * one that does out of log lines and run reasons all the same. Everything up to the
 * last `@` of the URL goes, so a password holding `@` or `/` leaves nothing behind (a
 * path with an `@` in it is hidden too: better too much than a password).
 */
export function redactUrl(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s"'<>]*@/gi, '$1***@');
}
