/** An out declared earlier that a path overlaps, and how many do. */
export interface OutOverlap {
  /** The out: the path itself, else the nearest one holding it, else the first inside it. */
  path: string;
  stage: string;
  /** How many declared outs the path overlaps in all, that one included. */
  count: number;
}

interface Folder {
  children: Map<string, Folder>;
  /** The stage that declared this very path an out, or null. */
  stage: string | null;
  /** How many outs lie strictly inside, and the first of them declared (its folder names its stage). */
  inside: number;
  firstInside: { path: string; folder: Folder } | null;
}

const folder = (): Folder => ({ children: new Map(), stage: null, inside: 0, firstInside: null });

/**
 * The outs a pipeline declares so far (normalized paths, `pathContains`' sense of one
 * holding another), kept as a tree of their components, so that which of them a path
 * overlaps is found in as many steps as the path has components. Comparing each out with
 * every earlier one took minutes for a pipeline file of a hundred thousand outs — one a
 * pull request may hold, which the App reads before anything is approved.
 */
export class DeclaredOuts {
  /** `.`: it holds every path, `../x` included. */
  private readonly root = folder();

  /** Declares `path` an out of `stage` (again: the later stage is named from then on). */
  add(path: string, stage: string): void {
    const ancestors: Folder[] = [];
    let node = this.root;
    for (const part of componentsOf(path)) {
      ancestors.push(node);
      let child = node.children.get(part);
      if (!child) {
        child = folder();
        node.children.set(part, child);
      }
      node = child;
    }
    if (node.stage === null) {
      for (const ancestor of ancestors) {
        ancestor.inside += 1;
        ancestor.firstInside ??= { path, folder: node };
      }
    }
    node.stage = stage;
  }

  /** Whether `path` is a declared out or lies inside one. */
  holds(path: string): boolean {
    let node: Folder | undefined = this.root;
    for (const part of componentsOf(path)) {
      if (node.stage !== null) return true;
      node = node.children.get(part);
      if (!node) return false;
    }
    return node.stage !== null;
  }

  /** The out `path` overlaps (is, lies inside, or holds), or null when it overlaps none. */
  overlap(path: string): OutOverlap | null {
    let nearest: { path: string; stage: string } | null = null;
    let holders = 0;
    let node: Folder | undefined = this.root;
    // Where the folder `node` stands for ends in `path`: `.` before the first component.
    let end = 0;
    for (const part of componentsOf(path)) {
      if (node.stage !== null) {
        holders += 1;
        nearest = { path: end === 0 ? '.' : path.slice(0, end), stage: node.stage };
      }
      end += (end === 0 ? 0 : 1) + part.length;
      node = node.children.get(part);
      if (!node) break;
    }
    const inside = node?.inside ?? 0;
    const count = holders + inside + (node?.stage != null ? 1 : 0);
    if (node?.stage != null) return { path, stage: node.stage, count };
    if (nearest) return { ...nearest, count };
    const first = node?.firstInside;
    return first ? { path: first.path, stage: first.folder.stage ?? '', count } : null;
  }
}

/** `a/b` → a, b; `.` (the pipeline's own folder) → none. */
function componentsOf(path: string): string[] {
  return path === '.' ? [] : path.split('/');
}
