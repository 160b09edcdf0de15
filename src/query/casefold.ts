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
