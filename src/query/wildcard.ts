/**
 * `*`-wildcard patterns (`url=*login*`, free text `err*timeout`, `in(values=[...])`) matched without
 * regular expressions: the pattern is split at the stars and the pieces are found left to right with
 * indexOf. Leftmost placement of each piece is always a valid choice for `*`-only globs, so there is
 * no backtracking and the cost is bounded by pieces x text length.
 */
import { fold } from './casefold.js';

export interface WildcardOptions {
  /** True: the whole value must match (field filters). False: a match anywhere (free text). */
  anchored: boolean;
  ignoreCase: boolean;
}

export type StringTest = (s: string) => boolean;

export function hasWildcard(pattern: string): boolean {
  return pattern.includes('*');
}

/** A test for `pattern` where every `*` matches any run of characters (including none). */
export function compileWildcard(pattern: string, opts: WildcardOptions): StringTest {
  const p = opts.ignoreCase ? fold(pattern) : pattern;
  const pieces = p.split('*');
  const norm = opts.ignoreCase ? fold : (s: string): string => s;
  if (pieces.length === 1) {
    const lit = pieces[0]!;
    return opts.anchored ? (s) => norm(s) === lit : (s) => norm(s).includes(lit);
  }
  const first = pieces[0]!;
  const last = pieces[pieces.length - 1]!;
  const middle = pieces.slice(1, -1).filter((x) => x.length > 0);
  if (!opts.anchored) {
    const all = pieces.filter((x) => x.length > 0);
    if (all.length === 0) return () => true;
    return (s) => {
      const t = norm(s);
      let pos = 0;
      for (const piece of all) {
        const at = t.indexOf(piece, pos);
        if (at < 0) return false;
        pos = at + piece.length;
      }
      return true;
    };
  }
  const fixed = first.length + last.length;
  return (s) => {
    const t = norm(s);
    if (t.length < fixed || !t.startsWith(first) || !t.endsWith(last)) return false;
    let pos = first.length;
    const limit = t.length - last.length;
    for (const piece of middle) {
      const at = t.indexOf(piece, pos);
      if (at < 0 || at + piece.length > limit) return false;
      pos = at + piece.length;
    }
    return true;
  };
}
