/**
 * Case folding for free-text search, defined exactly as the block bloom filter folds
 * (src/segments/bloom.ts `lower`): one UTF-16 code unit at a time, ASCII inline, others through a
 * memoized single-character toLowerCase that keeps the unit when the result is not one unit. Free
 * text is matched on folded text so a token the bloom pruned away can never match (String's own
 * toLowerCase differs for a few characters, e.g. a final capital sigma).
 */

const nonAsciiLower = new Map<number, number>();

export function foldUnit(c: number): number {
  if (c < 0x80) return c >= 65 && c <= 90 ? c + 32 : c;
  let l = nonAsciiLower.get(c);
  if (l === undefined) {
    const s = String.fromCharCode(c).toLowerCase();
    l = s.length === 1 ? s.charCodeAt(0) : c;
    nonAsciiLower.set(c, l);
  }
  return l;
}

/** True for the characters the bloom treats as token characters (ASCII alphanumerics and every non-ASCII unit). */
export function isTokenUnit(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c >= 0x80;
}

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
