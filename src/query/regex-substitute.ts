/**
 * replace() with less regex work where the pattern allows (issue 21): a pattern that is a plain
 * literal (`"error"`, `"\\."`) or one character class (`"\\d"`, `"[aeiou]"`, a letter under the `i`
 * flag, which regex.ts rewrites to `[xX]`), with a replacement that refers to no group (no `$`).
 * Such a pattern's every match is the literal, or one UTF-16 unit the class holds, so replacing
 * each of them from left to right is what `String.prototype.replace` with the global regex does.
 * A value where nothing matches is returned as it is, found so without the regex.
 *
 * Which units a class holds is asked of the compiled regex itself, one unit at a time (the first
 * time each is seen, remembered in a table), so the fast path cannot disagree with the regex on
 * what a class means (`\s` and Unicode spaces, `.` and line ends, ranges, negation, case folding).
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

/** True when the JS regex source `src` is one atom matching exactly one UTF-16 unit: a class, `.`, `\d` and the like. */
export function isOneUnit(src: string): boolean {
  if (src === '.' || /^\\[dDwWsS]$/.test(src)) return true;
  if (src[0] !== '[') return false;
  // The class closes at the first unescaped `]` (in JS `[]` is an empty class, `[^]` any unit).
  let i = 1;
  if (src[i] === '^') i++;
  while (i < src.length && src[i] !== ']') i += src[i] === '\\' ? 2 : 1;
  return i === src.length - 1;
}

/** Longest value the one-unit path builds from an array of units (longer ones take the regex). */
const MAX_UNITS = 8192;

/**
 * A substitution for `cr` and the JS replacement text `replacement` (as String.replace takes it),
 * or null when the general path must run.
 *
 * Measured against V8's own global replace (bench notes in docs/benchmarks.md, fifth pass): a
 * literal is found by `includes` faster than by the regex, but V8 replaces the occurrences it
 * finds as fast as split/join or replaceAll do, so a literal only skips the regex where it is
 * absent. A one-unit class with a one-unit (or empty) replacement is rebuilt unit by unit from a
 * table, cheaper than the regex's match-by-match replacement; with a longer replacement the regex
 * runs, once the table has found a unit to replace.
 */
export function substitution(cr: CompiledRegex, replacement: string): Substitute | null {
  if (replacement.includes('$')) return null;
  const { source, flags } = cr.re;
  // regex.ts folds case by rewriting the pattern; a JS `i` (or `u`, `y`) would change what a unit means.
  if (/[iuyv]/.test(flags)) return null;
  const all = cr.all;
  const general = (v: string): string => {
    all.lastIndex = 0;
    return v.replace(all, replacement);
  };
  const lit = literalOf(source);
  if (lit !== null) return (v) => (v.includes(lit) ? general(v) : v);
  if (!isOneUnit(source)) return null;
  const re = new RegExp(source, flags.replace('g', ''));
  // 0: not asked yet, 1: the class holds the unit, 2: it does not.
  const known = new Uint8Array(65536);
  const ask = (c: number): number => (known[c] = re.test(String.fromCharCode(c)) ? 1 : 2);
  const unit = replacement.length === 1 ? replacement.charCodeAt(0) : replacement.length === 0 ? -1 : null;
  return (v) => {
    const n = v.length;
    let i = 0;
    for (; i < n; i++) {
      const c = v.charCodeAt(i);
      const k = known[c]!;
      if ((k === 0 ? ask(c) : k) === 1) break;
    }
    if (i === n) return v;
    if (unit === null || n > MAX_UNITS) return general(v);
    if (unit >= 0) {
      const units = new Array<number>(n);
      for (let j = 0; j < i; j++) units[j] = v.charCodeAt(j);
      for (; i < n; i++) {
        const c = v.charCodeAt(i);
        const k = known[c]!;
        units[i] = (k === 0 ? ask(c) : k) === 1 ? unit : c;
      }
      return String.fromCharCode.apply(null, units);
    }
    const units: number[] = [];
    for (let j = 0; j < i; j++) units.push(v.charCodeAt(j));
    for (; i < n; i++) {
      const c = v.charCodeAt(i);
      const k = known[c]!;
      if ((k === 0 ? ask(c) : k) !== 1) units.push(c);
    }
    return String.fromCharCode.apply(null, units);
  };
}
