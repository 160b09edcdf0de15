/**
 * Case folding for free-text search, defined exactly as the block bloom filter folds
 * (src/segments/bloom.ts `lower`, which this module reuses): one UTF-16 code unit at a time, ASCII inline, others through a
 * memoized single-character toLowerCase that keeps the unit when the result is not one unit. Free
 * text is matched on folded text so a token the bloom pruned away can never match (String's own
 * toLowerCase differs for a few characters, e.g. a final capital sigma).
 */

import { isWord, lower } from '../segments/bloom.js';

/** One unit folded, exactly as the bloom filter folds it. */
export const foldUnit = lower;

/** True for the characters the bloom treats as token characters (ASCII alphanumerics and every non-ASCII unit). */
export const isTokenUnit = isWord;

const ASCII_ONLY = /^[\x00-\x7f]*$/;

/** `s` folded unit by unit. */
export function fold(s: string): string {
  // Pure ASCII (most log lines) folds identically with the native call, which avoids a string
  // concatenation per character.
  if (ASCII_ONLY.test(s)) return s.toLowerCase();
  let out = '';
  for (let i = 0; i < s.length; i++) out += String.fromCharCode(foldUnit(s.charCodeAt(i)));
  return out;
}

const KELVIN = 0x212a;

/**
 * A test for "`fold(s)` contains `fold(needle)`" that folds nothing per call when the folded needle
 * is ASCII: a case-insensitive regular expression then finds exactly the same matches, because
 * the only unit outside ASCII that folds into ASCII is the Kelvin sign (to `k`), which the pattern
 * lists beside `k` (a non-unicode `/i` never matches a non-ASCII unit to an ASCII one).
 */
export function foldedIncludes(needle: string): (s: string) => boolean {
  const n = fold(needle);
  if (!ASCII_ONLY.test(n)) return (s) => fold(s).includes(n);
  if (n.length === 0) return () => true;
  let source = '';
  for (let i = 0; i < n.length; i++) {
    const c = n.charCodeAt(i);
    if (c === 107 /* k */) source += `[k\\u${KELVIN.toString(16)}]`;
    else if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) source += n[i];
    else source += `\\x${c.toString(16).padStart(2, '0')}`;
  }
  const re = new RegExp(source, 'i');
  return (s) => re.test(s);
}
