/**
 * The scanner of the query language: character classes, comments, and one scanner per kind of token,
 * each run at the current position when the parser asks for it. The language is context-sensitive —
 * `/` starts a regex where an operand is expected and divides after one, `foo-bar` is one free-text
 * word but in an expression `a - b` subtracts — so the parser asks for the token it expects instead
 * of reading a context-free token stream. Every scanner is linear in what it consumes.
 */

import type { Span } from './ast.js';
import { queryError } from './errors.js';

export interface Word {
  text: string;
  span: Span;
}

export interface Quoted {
  value: string;
  span: Span;
}

export interface RegexToken {
  source: string;
  flags: string;
  span: Span;
}

export interface ParamToken {
  name: string;
  default: string | null;
  span: Span;
}

export type NumberOrWord = { k: 'num'; v: number; text: string; span: Span } | { k: 'word'; text: string; span: Span };

/** The regex flags of `/re/flags` (query-functions.md §2.7: i, m, d, g, F; plus `s` as `d`). */
export const REGEX_FLAGS = 'imdgsF';

/** Character codes the scanners compare against. */
const C = {
  Tab: 9,
  Lf: 10,
  Cr: 13,
  Space: 32,
  Quote: 34,
  Hash: 35,
  Dollar: 36,
  Star: 42,
  Plus: 43,
  Minus: 45,
  Dot: 46,
  Slash: 47,
  D0: 48,
  D9: 57,
  Colon: 58,
  Eq: 61,
  At: 64,
  LBracket: 91,
  Backslash: 92,
  RBracket: 93,
  Underscore: 95,
  Backquote: 96,
  LBrace: 123,
  RBrace: 125,
} as const;

/** Characters of a free-text word (ASCII part); `:` only when not starting `:=`. */
const WORD = asciiSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-*@#:/?+~%&'^$[]\\");
/** Characters an expression identifier continues with (ASCII part); `:`, `-` and `[` are checked apart. */
const IDENT = asciiSet('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.@');
/** Punctuation the grammar uses somewhere; anything else that is not a word character is "unexpected". */
const PUNCT = asciiSet('|(){}[]"`=!<>;,:/*+-%?$#@.');
const LETTER_OR_DIGIT = /[\p{L}\p{M}\p{N}]/u;
const LETTER = /\p{L}/u;
const SPACE = /\s/u;
const NUMBER = /[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const FUNCTION_NAME = /^[A-Za-z_][A-Za-z0-9_]*(?::[A-Za-z_][A-Za-z0-9_]*)*$/;

function asciiSet(chars: string): Uint8Array {
  const set = new Uint8Array(128);
  for (let i = 0; i < chars.length; i++) set[chars.charCodeAt(i)] = 1;
  return set;
}

function isAsciiLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

function isDigit(c: number): boolean {
  return c >= C.D0 && c <= C.D9;
}

/** `count`, `groupBy`, `text:contains`: what may stand before `(` as a function name. */
export function isFunctionName(name: string): boolean {
  return FUNCTION_NAME.test(name);
}

export class Scanner {
  readonly text: string;
  pos = 0;

  constructor(text: string) {
    this.text = text;
  }

  atEnd(): boolean {
    return this.pos >= this.text.length;
  }

  /** The character at pos + offset, or '' at the end. */
  peek(offset = 0): string {
    return this.text.charAt(this.pos + offset);
  }

  code(offset = 0): number {
    return this.text.charCodeAt(this.pos + offset);
  }

  startsWith(s: string): boolean {
    return this.text.startsWith(s, this.pos);
  }

  fail(span: Span, message: string): never {
    throw queryError(this.text, span, message);
  }

  /** Skips whitespace, `// line` and `/* block *\/` comments. */
  skipTrivia(): void {
    const text = this.text;
    let i = this.pos;
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === C.Space || c === C.Lf || c === C.Tab || c === C.Cr) {
        i++;
      } else if (c === C.Slash && text.charCodeAt(i + 1) === C.Slash) {
        const nl = text.indexOf('\n', i + 2);
        i = nl === -1 ? text.length : nl + 1;
      } else if (c === C.Slash && text.charCodeAt(i + 1) === C.Star) {
        const close = text.indexOf('*/', i + 2);
        if (close === -1) this.fail({ start: i, end: i + 2 }, 'Unclosed comment: expected "*/" before the end of the query');
        i = close + 2;
      } else if (c > 127 && SPACE.test(text.charAt(i))) {
        i++;
      } else if (c === 11 || c === 12) {
        i++;
      } else {
        break;
      }
    }
    this.pos = i;
  }

  /** Whether a free-text word starts here (`/` starts a regex, `?` a parameter, `[` a list). */
  atWordStart(): boolean {
    const c = this.code();
    if (c === C.Slash || c === 63 /* ? */ || c === C.LBracket || c === C.RBracket) return false;
    return this.wordCharAt(this.pos) > 0;
  }

  /** Length of the word character at i, 0 if none (a character outside the BMP is two units). */
  private wordCharAt(i: number): number {
    const c = this.text.charCodeAt(i);
    if (c < 128) {
      if (WORD[c] !== 1) return 0;
      return c === C.Colon && this.text.charCodeAt(i + 1) === C.Eq ? 0 : 1;
    }
    if (Number.isNaN(c)) return 0;
    const cp = this.text.codePointAt(i) ?? 0;
    const ch = String.fromCodePoint(cp);
    return LETTER_OR_DIGIT.test(ch) ? ch.length : 0;
  }

  /** A free-text word: `error*`, `192.168.1.1`, `foo-bar`, `#type`, `a.b[0]`, `-1`. Empty when none. */
  scanWord(): Word {
    const start = this.pos;
    let i = start;
    for (let n = this.wordCharAt(i); n > 0; n = this.wordCharAt(i)) i += n;
    this.pos = i;
    return { text: this.text.slice(start, i), span: { start, end: i } };
  }

  /** The free-text word at pos without consuming it. */
  peekWord(): string {
    const save = this.pos;
    const w = this.scanWord();
    this.pos = save;
    return w.text;
  }

  /** Whether an expression identifier (`status`, `@timestamp`, `#type`, `a.b[0]`, `user-agent`) starts here. */
  atIdentStart(): boolean {
    const c = this.code();
    if (c === C.At || c === C.Hash) return this.identPartAt(this.pos + 1, true) > 0;
    return this.identStartAt(this.pos) > 0;
  }

  private identStartAt(i: number): number {
    const c = this.text.charCodeAt(i);
    if (c < 128) return isAsciiLetter(c) || c === C.Underscore ? 1 : 0;
    if (Number.isNaN(c)) return 0;
    const ch = String.fromCodePoint(this.text.codePointAt(i) ?? 0);
    return LETTER.test(ch) ? ch.length : 0;
  }

  /** Length of the identifier part at i (a `[12]` index counts whole), 0 if none. */
  private identPartAt(i: number, first: boolean): number {
    const text = this.text;
    const c = text.charCodeAt(i);
    if (c < 128) {
      if (IDENT[c] === 1) return first && (c === C.Dot || c === C.At) ? 0 : 1;
      if (first) return 0;
      const next = text.charCodeAt(i + 1);
      // `a:b` (namespaced functions, colon-separated field names) but not `a:=`.
      if (c === C.Colon) return next !== C.Eq && (isAsciiLetter(next) || isDigit(next) || next === C.Underscore) ? 1 : 0;
      // `user-agent` is a name; `a - b` and `a-1` subtract.
      if (c === C.Minus) return isAsciiLetter(next) || next === C.Underscore ? 1 : 0;
      if (c === C.LBracket) {
        // `a[0]`, and `a[]` (a whole array, as array functions name it).
        let j = i + 1;
        while (isDigit(text.charCodeAt(j))) j++;
        return text.charCodeAt(j) === C.RBracket ? j + 1 - i : 0;
      }
      return 0;
    }
    if (Number.isNaN(c)) return 0;
    const ch = String.fromCodePoint(text.codePointAt(i) ?? 0);
    return LETTER_OR_DIGIT.test(ch) ? ch.length : 0;
  }

  /** An expression identifier; call only when atIdentStart(). */
  scanIdent(): Word {
    const start = this.pos;
    let i = start;
    const c = this.text.charCodeAt(i);
    i += c === C.At || c === C.Hash ? 1 : this.identStartAt(i);
    for (let n = this.identPartAt(i, false); n > 0; n = this.identPartAt(i, false)) i += n;
    this.pos = i;
    return { text: this.text.slice(start, i), span: { start, end: i } };
  }

  /**
   * At a digit: a number (`12`, `1.5`, `1e3`), or a word that starts with one (`1h`, `15min`,
   * `10.0.0.0/8`) when letters or more dots follow.
   */
  scanNumberOrWord(): NumberOrWord {
    const start = this.pos;
    NUMBER.lastIndex = start;
    const m = NUMBER.exec(this.text);
    const end = start + (m === null ? 0 : m[0].length);
    if (!this.digitWordPartAt(end)) {
      this.pos = end;
      const text = this.text.slice(start, end);
      return { k: 'num', v: Number(text), text, span: { start, end } };
    }
    let i = start;
    for (let n = this.digitWordPartAt(i); n > 0; n = this.digitWordPartAt(i)) i += n;
    this.pos = i;
    return { k: 'word', text: this.text.slice(start, i), span: { start, end: i } };
  }

  private digitWordPartAt(i: number): number {
    const text = this.text;
    const c = text.charCodeAt(i);
    if (c < 128) {
      if (isAsciiLetter(c) || isDigit(c) || c === C.Underscore || c === C.Dot) return 1;
      const next = text.charCodeAt(i + 1);
      if (c === C.Colon) return next !== C.Eq && (isDigit(next) || isAsciiLetter(next)) ? 1 : 0;
      // A prefix length (`10.0.0.0/8`): only a digit may follow the slash, so `4/2` still divides
      // when written as a number (the number branch above never gets here).
      if (c === C.Slash) return isDigit(next) ? 1 : 0;
      return 0;
    }
    if (Number.isNaN(c)) return 0;
    const ch = String.fromCodePoint(text.codePointAt(i) ?? 0);
    return LETTER_OR_DIGIT.test(ch) ? ch.length : 0;
  }

  /** `"..."` with `\"`, `\\`, `\n`, `\t`, `\r`; any other escape is kept as written (regexes need `\d`). */
  scanString(): Quoted {
    const text = this.text;
    const start = this.pos;
    let out = '';
    let from = start + 1;
    let i = from;
    for (;;) {
      const c = text.charCodeAt(i);
      if (Number.isNaN(c)) this.fail({ start, end: text.length }, 'Unclosed string: expected a closing " before the end of the query');
      if (c === C.Quote) break;
      if (c === C.Backslash) {
        const e = text.charAt(i + 1);
        if (e === '') this.fail({ start, end: text.length }, 'Unclosed string: expected a closing " before the end of the query');
        out += text.slice(from, i) + unescape(e);
        i += 2;
        from = i;
      } else {
        i++;
      }
    }
    out += text.slice(from, i);
    this.pos = i + 1;
    return { value: out, span: { start, end: i + 1 } };
  }

  /** `` `my field` `` with `` \` `` and `\\`. */
  scanBackquoted(): Quoted {
    const text = this.text;
    const start = this.pos;
    let out = '';
    let i = start + 1;
    for (;;) {
      const c = text.charCodeAt(i);
      if (Number.isNaN(c)) this.fail({ start, end: text.length }, 'Unclosed name: expected a closing ` before the end of the query');
      if (c === C.Backquote) break;
      if (c === C.Backslash && (text.charCodeAt(i + 1) === C.Backquote || text.charCodeAt(i + 1) === C.Backslash)) {
        out += text.charAt(i + 1);
        i += 2;
      } else {
        out += text.charAt(i);
        i++;
      }
    }
    if (out === '') this.fail({ start, end: i + 1 }, 'Empty name: write a field name between the backquotes');
    this.pos = i + 1;
    return { value: out, span: { start, end: i + 1 } };
  }

  /** `/re/flags`; only `\/` is unescaped in the source. A regex ends at its line. */
  scanRegex(): RegexToken {
    const text = this.text;
    const start = this.pos;
    let source = '';
    let from = start + 1;
    let i = from;
    for (;;) {
      const c = text.charCodeAt(i);
      if (Number.isNaN(c) || c === C.Lf) {
        this.fail({ start, end: i }, 'Unclosed regex: expected a closing / before the end of the line');
      }
      if (c === C.Slash) break;
      if (c === C.Backslash && text.charCodeAt(i + 1) === C.Slash) {
        source += text.slice(from, i) + '/';
        i += 2;
        from = i;
      } else {
        i += c === C.Backslash && text.charCodeAt(i + 1) !== C.Lf ? 2 : 1;
      }
    }
    source += text.slice(from, i);
    i++;
    const flagsStart = i;
    while (isAsciiLetter(text.charCodeAt(i))) {
      const f = text.charAt(i);
      if (!REGEX_FLAGS.includes(f)) {
        this.fail({ start: i, end: i + 1 }, `Unknown regex flag "${f}" (flags are i, m, d, g and F; quote text that contains "/")`);
      }
      i++;
    }
    this.pos = i;
    return { source, flags: text.slice(flagsStart, i), span: { start, end: i } };
  }

  /** `?name` or `?{name=default}` (the default a quoted string or text up to `}`). */
  scanParam(): ParamToken {
    const text = this.text;
    const start = this.pos;
    if (text.charCodeAt(start + 1) === C.Quote) {
      // `?"my param"`: a quoted parameter name.
      this.pos = start + 1;
      const q = this.scanString();
      if (q.value === '') this.fail(q.span, 'Expected a parameter name after "?"');
      return { name: q.value, default: null, span: { start, end: this.pos } };
    }
    if (text.charCodeAt(start + 1) !== C.LBrace) {
      let i = start + 1;
      while (isAsciiLetter(text.charCodeAt(i)) || isDigit(text.charCodeAt(i)) || text.charCodeAt(i) === C.Underscore) i++;
      if (i === start + 1) this.fail({ start, end: start + 1 }, 'Expected a parameter name after "?"');
      this.pos = i;
      return { name: text.slice(start + 1, i), default: null, span: { start, end: i } };
    }
    this.pos = start + 2;
    this.skipSpaces();
    const nameStart = this.pos;
    let name: string;
    if (this.code() === C.Quote) name = this.scanString().value;
    else {
      while (isAsciiLetter(this.code()) || isDigit(this.code()) || this.code() === C.Underscore) this.pos++;
      name = text.slice(nameStart, this.pos);
    }
    if (name === '') this.fail({ start: this.pos, end: this.pos + 1 }, 'Expected a parameter name after "?{"');
    this.skipSpaces();
    let dflt: string | null = null;
    if (this.code() === C.Eq) {
      this.pos++;
      this.skipSpaces();
      if (this.code() === C.Quote) {
        dflt = this.scanString().value;
        this.skipSpaces();
      } else {
        const close = text.indexOf('}', this.pos);
        const end = close === -1 ? text.length : close;
        dflt = text.slice(this.pos, end).trim();
        this.pos = end;
      }
    }
    if (this.code() !== C.RBrace) {
      const found = this.atEnd() ? 'end of query' : `"${this.peek()}"`;
      this.fail({ start: this.pos, end: this.pos + 1 }, `Expected "}" to close the parameter ?{${name}, found ${found}`);
    }
    this.pos++;
    return { name, default: dflt, span: { start, end: this.pos } };
  }

  private skipSpaces(): void {
    while (this.code() === C.Space || this.code() === C.Tab) this.pos++;
  }

  /**
   * What is at pos, for "Expected X, found Y" messages: a quoted token text, "a quoted string",
   * "end of query"; `unknown` when the character has no place in the language at all.
   */
  describe(): { found: string; span: Span; unknown: boolean } {
    const text = this.text;
    const i = this.pos;
    if (i >= text.length) {
      // Point just after the last text, not at a trailing newline's empty line.
      const end = text.trimEnd().length;
      return { found: 'end of query', span: { start: end, end }, unknown: false };
    }
    const c = text.charCodeAt(i);
    if (SPACE.test(text.charAt(i))) return { found: 'whitespace', span: { start: i, end: i + 1 }, unknown: false };
    if (c === C.Quote) return { found: 'a quoted string', span: { start: i, end: i + 1 }, unknown: false };
    if (c === C.Backquote) return { found: 'a backquoted name', span: { start: i, end: i + 1 }, unknown: false };
    for (const op of TWO_CHAR_OPS) {
      if (text.startsWith(op, i)) return { found: `"${op}"`, span: { start: i, end: i + 2 }, unknown: false };
    }
    if (this.atWordStart()) {
      const save = this.pos;
      const w = this.scanWord();
      this.pos = save;
      // `a]` in `[a]` is a word to free text; show what the reader sees as the token.
      const close = w.text.indexOf(']');
      const text = close > 0 && !w.text.slice(0, close).includes('[') ? w.text.slice(0, close) : w.text;
      const shown = text.length > 40 ? `${text.slice(0, 40)}...` : text;
      return { found: `"${shown}"`, span: { start: i, end: i + text.length }, unknown: false };
    }
    const cp = text.codePointAt(i) ?? c;
    const ch = String.fromCodePoint(cp);
    const span = { start: i, end: i + ch.length };
    if (c < 128 && PUNCT[c] === 1) return { found: `"${ch}"`, span, unknown: false };
    const hex = cp.toString(16).toUpperCase().padStart(4, '0');
    return { found: `"${ch}" (U+${hex})`, span, unknown: true };
  }
}

const TWO_CHAR_OPS = [':=', '=~', '=>', '==', '!=', '<=', '>='];

function unescape(e: string): string {
  switch (e) {
    case '"':
      return '"';
    case '\\':
      return '\\';
    case 'n':
      return '\n';
    case 't':
      return '\t';
    case 'r':
      return '\r';
    default:
      return '\\' + e;
  }
}
