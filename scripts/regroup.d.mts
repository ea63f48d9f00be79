// The types of scripts/regroup.mjs, a plain ES module script (node runs it without a build).

/** Files whose root-relative path matches one of `globs` move into the folder `to`. */
export interface RegroupRule {
  to: string;
  globs: string[];
}

/** What a run would do: the moves (old → new path) and each changed file's new text by its new path. */
export interface RegroupPlan {
  moves: Map<string, string>;
  rewrites: Map<string, string>;
  /** Files left directly in a folder that keeps none, which no rule places. */
  unplaced: string[];
}

export const RULES: RegroupRule[];
export function destinationOf(path: string, rules?: RegroupRule[]): string | null;
export function planRegroup(root: string, rules?: RegroupRule[]): Promise<RegroupPlan>;
export function applyRegroup(root: string, plan: RegroupPlan, options?: { format?: boolean }): Promise<void>;
