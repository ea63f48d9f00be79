/** `loss:120,acc:120` (names URI-encoded) as name → last step held; null for anything else. */
export function parseStepsHeld(text: string): Map<string, number> | null {
  const held = new Map<string, number>();
  for (const part of text.split(',').filter(Boolean)) {
    const cut = part.lastIndexOf(':');
    const step = Number(part.slice(cut + 1));
    if (cut <= 0 || !Number.isSafeInteger(step) || step < 0) return null;
    try {
      held.set(decodeURIComponent(part.slice(0, cut)), step);
    } catch {
      return null;
    }
  }
  return held;
}

/** What a page holds, as parseStepsHeld reads it: also the SSE id of a run's live updates. */
export function formatStepsHeld(held: ReadonlyMap<string, number>): string {
  return [...held].map(([name, step]) => `${encodeURIComponent(name)}:${step}`).join(',');
}
