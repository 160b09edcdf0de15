/** ASCII character classes shared by the hand-written line scanners (char codes in, no allocation). */

export function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Space, tab, newline, vertical tab, form feed, carriage return. */
export function isWhitespace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}
