/**
 * The Content-Disposition of a download saved as `fileName` (RFC 6266): a quoted ASCII
 * fallback, with anything else replaced by `_` (no quote, backslash or control character
 * can end the header or the quoted string), and the exact name, UTF-8 and percent-encoded
 * (RFC 8187), which browsers prefer.
 */
export function attachmentDisposition(fileName: string): string {
  const fallback = fileName.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(fileName).replace(
    /['()*]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
