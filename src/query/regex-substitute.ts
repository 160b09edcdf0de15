/**
 * replace() with less regex work where the pattern allows (issue 21): a pattern that is a plain
 * literal (`"error"`, `"\\."`, `"/v2/"`) and a replacement that refers to no group (no `$`). Every
 * match of such a pattern is the literal, so a value that does not contain it is left as it is,
 * found so by `includes` instead of a regex run; a value that does goes through the regex.
 *
 * What was measured and left out (docs/benchmarks.md, fifth pass): V8's own global replace of the
 * occurrences is as fast as split/join or replaceAll, so the regex does the replacing; and a
 * one-character class (`"\\d"`) rebuilt unit by unit in JavaScript, from a table of the units the
 * regex holds, was slower than the regex on the values a scan reads (slices of a decoded column),
 * so such patterns take the regex as any other.
 */
import type { CompiledRegex } from './regex.js';

/** `v` with every match replaced (`v` itself when nothing matches). */
export type Substitute = (v: string) => string;

/** A `\` escape of a character with no special meaning in a JS (non-`u`) pattern: the character itself. */
const PLAIN_ESCAPE = /^[^A-Za-z0-9]$/;
const SPECIAL = new Set(['\\', '^', '$', '.', '|', '?', '*', '+', '(', ')', '[', ']', '{', '}']);

/** The literal the JS regex source `src` matches exactly, or null when it is not one. */
export function literalOf(src: string): string | null {
  let out = '';
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === '\\') {
      const n = src[i + 1];
      if (n === undefined || !PLAIN_ESCAPE.test(n)) return null;
      out += n;
      i++;
      continue;
    }
    if (SPECIAL.has(c)) return null;
    out += c;
  }
  return out.length > 0 ? out : null;
}

/**
 * A substitution for `cr` and the JS replacement text `replacement` (as String.replace takes it),
 * or null when the general path must run.
 */
export function substitution(cr: CompiledRegex, replacement: string): Substitute | null {
  if (replacement.includes('$')) return null;
  const { source, flags } = cr.re;
  // regex.ts folds case by rewriting the pattern (a literal under `i` is not one); a JS `i`, `u`
  // or `y` would change what the source means.
  if (/[iuyv]/.test(flags)) return null;
  const lit = literalOf(source);
  if (lit === null) return null;
  const all = cr.all;
  return (v) => {
    if (!v.includes(lit)) return v;
    all.lastIndex = 0;
    return v.replace(all, replacement);
  };
}
