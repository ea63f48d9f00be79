/** Indexed patterns are found through grams of this many characters. */
const GRAM = 4;

/** The text is sampled every STRIDE characters: at a gram starting there. */
const STRIDE = 5;

/**
 * Patterns at least this long are indexed: an occurrence holds STRIDE grams starting at
 * STRIDE consecutive positions, so one of them starts at a sampled position.
 */
const INDEXED_LENGTH = GRAM + STRIDE - 1;

/**
 * Up to this many indexed patterns, each is looked for with `indexOf` instead. V8's
 * `indexOf` is fastest for a few, but scans the text once per pattern; the sampled pass
 * costs the same however many there are. Measured on Node 20, the two cross between 8 and
 * 16 patterns on log lines and on MiB pieces of plain text, and below 8 on base64 text; at
 * 16, one secret with all its escaped and base64 forms is still looked for with `indexOf`.
 */
const INDEXOF_LIMIT = 16;

/** The filter has 2^FILTER_BITS bits, indexed by a gram hash's top bits. */
const FILTER_BITS = 20;

/**
 * A set of literal strings found together in a text: every occurrence of each, overlapping
 * ones too, in time that does not grow with how many there are. Each long pattern is
 * indexed by the hash of each of its first STRIDE grams with the gram's offset; the text is
 * read only at every STRIDE-th position, whose gram's hash, through a bit filter that most
 * windows fail at one array read, names the patterns that may start just before it, which
 * are then compared. Few or short patterns are looked for with `indexOf`, faster for them.
 */
export class MultiStringSearch {
  private readonly patterns = new Set<string>();
  /** Patterns shorter than INDEXED_LENGTH: always looked for with `indexOf`. */
  private readonly short: string[] = [];
  /** Patterns of INDEXED_LENGTH characters or more, as added. */
  private readonly long: string[] = [];
  /** For a gram hash, the long patterns with such a gram and how far into them it starts. */
  private readonly byGramHash = new Map<number, { pattern: string; offset: number }[]>();
  /** Bit set: whether some entry of byGramHash has a hash with these top bits. */
  private readonly filter = new Uint32Array((1 << FILTER_BITS) / 32);
  private longestLength = 0;

  /** Adds a pattern; the empty string, which matches nothing worth finding, is ignored. */
  add(pattern: string): void {
    if (pattern === '' || this.patterns.has(pattern)) return;
    this.patterns.add(pattern);
    this.longestLength = Math.max(this.longestLength, pattern.length);
    if (pattern.length < INDEXED_LENGTH) {
      this.short.push(pattern);
      return;
    }
    this.long.push(pattern);
    for (let offset = 0; offset < STRIDE; offset++) {
      const hash = gramHash(pattern, offset);
      const bit = hash >>> (32 - FILTER_BITS);
      this.filter[bit >>> 5]! |= 1 << (bit & 31);
      const entries = this.byGramHash.get(hash);
      if (entries) entries.push({ pattern, offset });
      else this.byGramHash.set(hash, [{ pattern, offset }]);
    }
  }

  /** How many distinct patterns there are. */
  get size(): number {
    return this.patterns.size;
  }

  /** The length of the longest pattern; 0 without any. */
  get longest(): number {
    return this.longestLength;
  }

  /** Every occurrence of every pattern in the text, as `[start, end)`, in no particular order. */
  occurrences(text: string): [number, number][] {
    const found: [number, number][] = [];
    const sampled = this.long.length > INDEXOF_LIMIT;
    for (const pattern of sampled ? this.short : [...this.short, ...this.long]) {
      for (let at = text.indexOf(pattern); at !== -1; at = text.indexOf(pattern, at + 1)) {
        found.push([at, at + pattern.length]);
      }
    }
    if (sampled) this.sample(text, found);
    return found;
  }

  /**
   * Finds the long patterns. Of an occurrence at `start`, the gram at offset `at - start`
   * (below STRIDE) is read at the one sampled position `at` in `[start, start + STRIDE)`,
   * so each occurrence is compared, and found, exactly once.
   */
  private sample(text: string, found: [number, number][]): void {
    const { filter, byGramHash } = this;
    for (let at = 0; at + GRAM <= text.length; at += STRIDE) {
      const hash = gramHash(text, at);
      const bit = hash >>> (32 - FILTER_BITS);
      if ((filter[bit >>> 5]! & (1 << (bit & 31))) === 0) continue;
      for (const { pattern, offset } of byGramHash.get(hash) ?? []) {
        const start = at - offset;
        if (start >= 0 && text.startsWith(pattern, start)) found.push([start, start + pattern.length]);
      }
    }
  }
}

/** FNV-1a, 32-bit, of the GRAM UTF-16 code units of a text from `from`. */
function gramHash(text: string, from: number): number {
  let hash = 0x811c9dc5;
  for (let at = from; at < from + GRAM; at++) hash = Math.imul(hash ^ text.charCodeAt(at), 0x01000193);
  return hash >>> 0;
}
