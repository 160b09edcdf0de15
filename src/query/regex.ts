/**
 * Regular expressions that cannot hang a query. V8 is told (process-wide, so worker threads too)
 * to fall back to its linear-time engine after excessive backtracking; that fallback only exists
 * for patterns the linear engine supports, so every pattern is first checked with the `l` flag and
 * refused when it cannot run in linear time (backreferences, lookaround, large counted
 * repetitions). The linear engine does not support V8's `i` or `u` flags either, so the product's
 * `i` flag is implemented by rewriting letters into two-case classes. Named groups are renamed to
 * `g0`, `g1`, ... because LogScale field names (`a.b`, `@x`) are not valid JS group names; the
 * original names are kept by index.
 *
 * Product flags: `i` ignore case, `m` multi-line `^`/`$` (JS `m`), `d` dot matches newline (JS `s`;
 * `s` is accepted as its synonym), `g` repeat (a semantic for regex()/replace(), exposed as `repeat`),
 * `F` (the product's regex engine v2; accepted, no effect: there is one engine here).
 */
import v8 from 'node:v8';

// Measured on Node 20: `/(a+)+$/` on 50,000 'a's followed by 'b' takes ~15 ms with the fallback
// and does not finish for minutes without it.
v8.setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');
v8.setFlagsFromString('--enable-experimental-regexp-engine');

export interface CompiledRegex {
  /** Non-global: test() and single exec(). */
  re: RegExp;
  /** The same pattern with the JS `g` flag, for iterating matches (reset lastIndex before use). */
  all: RegExp;
  /** Original group names by rewritten index: group `g<i>` is field `groupNames[i]`. */
  groupNames: string[];
  /** The product's `g` flag was given. */
  repeat: boolean;
  /** The pattern as written (for messages). */
  source: string;
}

export type RegexErrorSink = (message: string) => never;

const PRODUCT_FLAGS = new Set(['i', 'm', 'd', 's', 'g', 'F']);
const CACHE_MAX = 2000;
const cache = new Map<string, CompiledRegex>();

function otherCase(ch: string): string | null {
  const lo = ch.toLowerCase();
  const up = ch.toUpperCase();
  if (lo.length !== 1 || up.length !== 1) return null;
  if (lo !== ch) return lo;
  if (up !== ch) return up;
  return null;
}

function isLetter(ch: string): boolean {
  return otherCase(ch) !== null;
}

/** Length of the escape sequence starting at `src[i] === '\\'` (so it is copied untouched). */
function escapeLength(src: string, i: number): number {
  const c = src[i + 1];
  if (c === undefined) return 1;
  if (c === 'x') return 4;
  if (c === 'u') {
    if (src[i + 2] === '{') {
      const close = src.indexOf('}', i + 3);
      return close < 0 ? 2 : close - i + 1;
    }
    return 6;
  }
  if (c === 'c') return 3;
  if ((c === 'p' || c === 'P') && src[i + 2] === '{') {
    const close = src.indexOf('}', i + 3);
    return close < 0 ? 2 : close - i + 1;
  }
  if (c === 'k' && src[i + 2] === '<') {
    const close = src.indexOf('>', i + 3);
    return close < 0 ? 2 : close - i + 1;
  }
  return 2;
}

/** Rewrites a character class body (between `[` and `]`) so letters match both cases. */
function foldClass(body: string): string {
  let out = '';
  let extra = '';
  let i = 0;
  if (body.startsWith('^')) {
    out += '^';
    i = 1;
  }
  // Reads one class atom at i: returns [text, literal char or null, next index].
  const atom = (at: number): [string, string | null, number] => {
    if (body[at] === '\\') {
      const n = escapeLength(body, at);
      return [body.slice(at, at + n), null, at + n];
    }
    const cp = body.codePointAt(at)!;
    const ch = String.fromCodePoint(cp);
    return [ch, ch, at + ch.length];
  };
  while (i < body.length) {
    const [t1, c1, n1] = atom(i);
    if (body[n1] === '-' && n1 + 1 < body.length) {
      const [t2, c2, n2] = atom(n1 + 1);
      out += `${t1}-${t2}`;
      if (c1 !== null && c2 !== null && isLetter(c1) && isLetter(c2)) {
        for (const conv of [(s: string) => s.toUpperCase(), (s: string) => s.toLowerCase()]) {
          const a = conv(c1);
          const b = conv(c2);
          if (a.length === 1 && b.length === 1 && a <= b && (a !== c1 || b !== c2)) extra += `${a}-${b}`;
        }
      }
      i = n2;
      continue;
    }
    out += t1;
    if (c1 !== null) {
      const o = otherCase(c1);
      if (o !== null) extra += o;
    }
    i = n1;
  }
  return out + extra;
}

interface Rewritten {
  source: string;
  groupNames: string[];
}

/** Renames named groups and, for `i`, makes letters two-case. */
function rewrite(src: string, ignoreCase: boolean, fail: RegexErrorSink): Rewritten {
  let out = '';
  const groupNames: string[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (c === '\\') {
      const n = escapeLength(src, i);
      if (src[i + 1] === 'k' && src[i + 2] === '<') fail(`regex /${src}/ uses a backreference (\\k<...>), which is not supported`);
      out += src.slice(i, i + n);
      i += n;
      continue;
    }
    if (c === '[') {
      // Find the closing bracket; a `]` right after `[` or `[^` closes in JS (empty class).
      let j = i + 1;
      if (src[j] === '^') j++;
      while (j < src.length && src[j] !== ']') j += src[j] === '\\' ? escapeLength(src, j) : 1;
      if (j >= src.length) fail(`regex /${src}/ has an unterminated character class`);
      const body = src.slice(i + 1, j);
      out += `[${ignoreCase ? foldClass(body) : body}]`;
      i = j + 1;
      continue;
    }
    if (c === '(' && src[i + 1] === '?' && src[i + 2] === '<' && src[i + 3] !== '=' && src[i + 3] !== '!') {
      const close = src.indexOf('>', i + 3);
      if (close < 0) fail(`regex /${src}/ has an unterminated group name`);
      const name = src.slice(i + 3, close);
      if (name.length === 0) fail(`regex /${src}/ has an empty group name`);
      out += `(?<g${groupNames.length}>`;
      groupNames.push(name);
      i = close + 1;
      continue;
    }
    if (c === '(' && src[i + 1] === '?') {
      // (?: (?= (?! (?<= (?<! : copy the marker so its letters (none) and `?` stay syntax.
      const n = src[i + 2] === '<' ? 4 : 3;
      out += src.slice(i, i + n);
      i += n;
      continue;
    }
    if (c === '{') {
      // A quantifier {n}, {n,}, {n,m} (digits and a comma only) is copied; otherwise a literal brace.
      const m = /^\{\d+(?:,\d*)?\}/.exec(src.slice(i, i + 24));
      if (m !== null) {
        out += m[0];
        i += m[0].length;
        continue;
      }
    }
    const cp = src.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    const o = ignoreCase ? otherCase(ch) : null;
    out += o === null ? ch : `[${ch}${o}]`;
    i += ch.length;
  }
  return { source: out, groupNames };
}

/**
 * Compiles a product regex. `flags` are the product's (`i`, `m`, `d`, `g`); a leading Java-style
 * `(?i)` / `(?m)` / `(?s)` / `(?d)` in the pattern adds flags too. Calls `fail` (which throws) for an
 * invalid pattern, an unknown flag, or a pattern that cannot run in linear time.
 */
export function compileRegex(source: string, flags: string, fail: RegexErrorSink): CompiledRegex {
  const key = `${flags}\u0000${source}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;

  let pattern = source;
  const all = new Set<string>();
  for (const f of flags) {
    if (!PRODUCT_FLAGS.has(f)) fail(`unknown regex flag '${f}' in /${source}/${flags} (supported: i, m, d, g, F)`);
    all.add(f === 's' ? 'd' : f);
  }
  const inline = /^\(\?([imsd]+)\)/.exec(pattern);
  if (inline !== null) {
    for (const f of inline[1]!) all.add(f === 's' ? 'd' : f);
    pattern = pattern.slice(inline[0].length);
  }
  const rw = rewrite(pattern, all.has('i'), fail);
  const jsFlags = (all.has('m') ? 'm' : '') + (all.has('d') ? 's' : '');
  let re: RegExp;
  try {
    re = new RegExp(rw.source, jsFlags);
  } catch (err) {
    const msg = err instanceof Error ? err.message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '') : String(err);
    return fail(`invalid regex /${source}/: ${msg}`);
  }
  try {
    new RegExp(rw.source, `${jsFlags}l`);
  } catch {
    return fail(
      `regex /${source}/ cannot be run in linear time: backreferences, lookahead and lookbehind, and counted repetitions with large bounds are not supported`,
    );
  }
  const compiled: CompiledRegex = {
    re,
    all: new RegExp(rw.source, `${jsFlags}g`),
    groupNames: rw.groupNames,
    repeat: all.has('g'),
    source,
  };
  if (cache.size >= CACHE_MAX) cache.clear();
  cache.set(key, compiled);
  return compiled;
}

/** The named-group values of one match as [field, value] pairs (groups that did not take part are skipped). */
export function groupsOf(cr: CompiledRegex, m: RegExpExecArray): [string, string][] {
  const out: [string, string][] = [];
  const g = m.groups;
  if (g === undefined) return out;
  for (let i = 0; i < cr.groupNames.length; i++) {
    const v = g[`g${i}`];
    if (v !== undefined) out.push([cr.groupNames[i]!, v]);
  }
  return out;
}
