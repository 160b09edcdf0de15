/**
 * Finding `key=value` pairs anywhere in a line, as the product's kvParse does: `key=value` (value up
 * to whitespace), `key="double quoted"` and `key='single quoted'` (a backslash escapes the quote or
 * itself). Keys are runs of [A-Za-z0-9_.@-] that start with a letter, `_` or `@`. Shared by the kv
 * and syslog parsers.
 *
 * Linear by construction: the scan jumps from one "=" to the next with indexOf, and the backwards
 * walk that finds each key never goes past the end of the previous pair (or the previous "="), so
 * every character is looked at a bounded number of times.
 */
import { isWhitespace } from './chars.js';
import type { FieldSink } from './field-sink.js';

const KEY = 1;
const KEY_START = 2;
const CHAR_CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const letter = (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
  const digit = c >= 48 && c <= 57;
  if (letter || c === 95 /* _ */ || c === 64 /* @ */) CHAR_CLASS[c] = KEY | KEY_START;
  else if (digit || c === 46 /* . */ || c === 45 /* - */) CHAR_CLASS[c] = KEY;
}

function charClass(c: number): number {
  return c < 128 ? CHAR_CLASS[c]! : 0;
}

/**
 * Adds every pair in `text[from..]` to `sink`. With `overwrite` a repeated key keeps its last value
 * (kvParse's default); without it, fields already in the sink (set by the caller or earlier in the
 * line) are kept. Stops as soon as the sink refuses a field.
 */
export function extractKeyValues(text: string, from: number, sink: FieldSink, overwrite: boolean): void {
  let floor = from;
  let pos = from;
  for (;;) {
    const eq = text.indexOf('=', pos);
    if (eq < 0) return;
    let keyStart = eq;
    while (keyStart > floor && (charClass(text.charCodeAt(keyStart - 1)) & KEY) !== 0) keyStart--;
    // "--level=x" names "level": characters that cannot start a key are dropped from the front.
    while (keyStart < eq && (charClass(text.charCodeAt(keyStart)) & KEY_START) === 0) keyStart++;
    if (keyStart === eq) {
      pos = floor = eq + 1;
      continue;
    }
    const key = text.slice(keyStart, eq);
    const value = readValue(text, eq + 1);
    const ok = overwrite ? sink.set(key, value.text) : sink.setIfAbsent(key, value.text);
    if (!ok) return;
    pos = floor = value.end;
  }
}

interface Value {
  text: string;
  /** Index just past the value (and its closing quote). */
  end: number;
}

function readValue(text: string, start: number): Value {
  const q = text.charCodeAt(start);
  if (q === 34 /* " */ || q === 39 /* ' */) return readQuoted(text, start + 1, q);
  let end = start;
  while (end < text.length && !isWhitespace(text.charCodeAt(end))) end++;
  return { text: text.slice(start, end), end };
}

/**
 * A quoted value: `\q` and `\\` are unescaped, other backslashes kept as written (Windows paths).
 * An unterminated quote takes the rest of the line, which is what a truncated line needs, and keeps
 * the scan linear (no rescanning for a closing quote that never comes).
 */
function readQuoted(text: string, start: number, quote: number): Value {
  let out = '';
  let segment = start;
  let i = start;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === quote) {
      return { text: out + text.slice(segment, i), end: i + 1 };
    }
    if (c === 92 /* \ */ && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next === quote || next === 92) {
        out += text.slice(segment, i);
        segment = i + 1;
      }
      i += 2;
      continue;
    }
    i++;
  }
  return { text: out + text.slice(segment), end: text.length };
}
