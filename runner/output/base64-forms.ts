/**
 * Shorter secrets get no base64 forms. A secret of 8 bytes has trimmed forms of 10
 * characters at every alignment (60 bits, mixed case and digits): hardly a word or an
 * identifier is spelt so, and the odds of one turning up by chance in a MiB of unrelated
 * base64 are about 1e-11. Shorter secrets' forms shrink to 3 characters (a 3-byte secret shifted by one),
 * which ordinary text and every base64 blob would hold somewhere. The secret itself is
 * still masked at any length, and few real tokens or passwords are shorter (NIST SP
 * 800-63B asks for 8 characters at least).
 */
export const MIN_BASE64_SECRET_BYTES = 8;

/** Base64 writes 3 bytes as 4 characters; a secret can start at any of the 3 bytes of a group. */
const ALIGNMENTS = [0, 1, 2] as const;

/**
 * How many characters at the start of the base64 of `alignment` bytes followed by the
 * secret depend on those bytes: with one, the group's first character is theirs and its
 * second mixes their last 2 bits with the secret's first 4; with two, the first two are
 * theirs and the third mixes their last 4 bits with the secret's first 2.
 */
const LEADING_MIXED = [0, 2, 3] as const;

/**
 * A secret's line as base64 writes it inside longer base64 text, in the standard and the
 * URL-safe alphabets (`Authorization: Basic base64(user:secret)`, `base64 <<< $TOKEN`, a
 * Kubernetes secret's manifest, a JWT): for each of the 3 positions the secret can take in
 * a 3-byte group, the characters that depend on the secret's bytes alone. The characters
 * at either end that also hold bits of what surrounds it are left out, or a secret inside
 * other text would never match; they carry at most 4 bits of its first and last byte. The
 * whole padded base64 is a form too, so that a secret encoded on its own is masked to the
 * last character. Empty for a secret of fewer than MIN_BASE64_SECRET_BYTES bytes of UTF-8.
 */
export function base64Forms(line: string): string[] {
  const bytes = Buffer.from(line, 'utf8');
  if (bytes.length < MIN_BASE64_SECRET_BYTES) return [];
  const whole = bytes.toString('base64');
  const forms = [whole, urlSafe(whole)];
  for (const alignment of ALIGNMENTS) {
    const shifted = Buffer.concat([Buffer.alloc(alignment), bytes]);
    const encoded = shifted.toString('base64').replace(/=+$/, '');
    // A group the secret does not fill ends in a character that mixes in the next byte.
    const end = encoded.length - (shifted.length % 3 === 0 ? 0 : 1);
    const trimmed = encoded.slice(LEADING_MIXED[alignment], end);
    forms.push(trimmed, urlSafe(trimmed));
  }
  return forms;
}

/** Base64 in the URL-safe alphabet of RFC 4648 §5. */
function urlSafe(base64: string): string {
  return base64.replace(/\+/g, '-').replace(/\//g, '_');
}
