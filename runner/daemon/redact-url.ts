/**
 * Text with the credentials of every URL in it replaced by `***`
 * (`https://x-access-token:abc@github.com/o/r` → `https://***@github.com/o/r`). Clone
 * URLs are meant to carry none (credentials come as a header, DESIGN §6); this keeps
 * one that does out of log lines and run reasons all the same.
 */
export function redactUrl(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi, '$1***@');
}
