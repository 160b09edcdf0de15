/**
 * The required literal of a regular expression (issue 19): a run of characters every match must
 * contain, read from the pattern as written (the product's syntax is JavaScript's, without the `u`
 * flag: regex.ts). Text that lacks it cannot match, so a scan tests the literal first (allocation-
 * free over templated raw strings, text-match.ts) and runs the regex only on the rows that have it;
 * a pattern that is nothing but the literal (and is case-sensitive) needs no regex run at all.
 *
 * Conservative by construction: anything not plainly a literal character (classes, groups, `.`,
 * anchors, escapes of letters or digits, `{` that is not a quantifier) ends the current run; a
 * quantifier that allows zero repetitions (`?`, `*`, `{0,...}`) takes the character before it
 * out of the run; a top-level `|` means no literal is required. With the `i` flag only ASCII
 * characters are kept (each then matches exactly itself and its other ASCII case, which folding
 * maps to the same unit), and the literal is searched folded.
 */

export interface RegexLiteral {
  /** The literal as written (search it folded when `folded`). */
  text: string;
  /** The regex had the `i` flag: search the literal case-insensitively. */
  folded: boolean;
  /** The regex matches exactly the strings that contain `text` (case-sensitively): no regex run needed. */
  exact: boolean;
}

const QUANT = /^\{(\d+)(,\d*)?\}/;

function isAsciiAlnum(c: string): boolean {
  return /^[A-Za-z0-9]$/.test(c);
}

/** Index just past the group opened at `src[at] === '('`, or -1 when unbalanced. */
function skipGroup(src: string, at: number): number {
  let depth = 0;
  for (let i = at; i < src.length; i++) {
    const c = src[i];
    if (c === '\\') i++;
    else if (c === '[') {
      const end = skipClass(src, i);
      if (end < 0) return -1;
      i = end - 1;
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i + 1;
  }
  return -1;
}

/** Index just past the class opened at `src[at] === '['`, or -1 when unclosed. */
function skipClass(src: string, at: number): number {
  for (let i = at + 1; i < src.length; i++) {
    const c = src[i];
    if (c === '\\') i++;
    else if (c === ']') return i + 1;
  }
  return -1;
}

/** The longest required literal of `/source/flags`, or null when none can be read. */
export function regexLiteral(source: string, flags: string): RegexLiteral | null {
  const folded = flags.includes('i');
  const runs: string[] = [];
  let cur = '';
  let plain = true;
  const end = (): void => {
    if (cur.length > 0) runs.push(cur);
    cur = '';
  };
  const breaks = (): void => {
    plain = false;
    end();
  };
  const literal = (ch: string): void => {
    if (folded && ch.charCodeAt(0) >= 0x80) breaks();
    else cur += ch;
  };
  /** After a quantifier: a lazy `?` belongs to it. */
  const lazy = (i: number): number => (source[i] === '?' ? i + 1 : i);
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    switch (c) {
      case '\\': {
        const e = source[i + 1];
        if (e === undefined) return null;
        if (isAsciiAlnum(e)) {
          // \d \w \b \x41 \u0041 \cA \1 ...: not taken as literals (their length skipped conservatively).
          breaks();
          i += e === 'x' ? 4 : e === 'u' ? 6 : e === 'c' ? 3 : 2;
          if (e === 'u' && source[i - 4] === '{') {
            const close = source.indexOf('}', i - 4);
            if (close < 0) return null;
            i = close + 1;
          }
          continue;
        }
        literal(e);
        i += 2;
        continue;
      }
      case '(': {
        breaks();
        const next = skipGroup(source, i);
        if (next < 0) return null;
        i = next;
        continue;
      }
      case '[': {
        breaks();
        const next = skipClass(source, i);
        if (next < 0) return null;
        i = next;
        continue;
      }
      case '|':
        return null;
      case '*':
      case '?':
        plain = false;
        cur = cur.slice(0, -1);
        end();
        i = lazy(i + 1);
        continue;
      case '+':
        breaks();
        i = lazy(i + 1);
        continue;
      case '{': {
        const q = QUANT.exec(source.slice(i, i + 32));
        if (q === null) {
          breaks();
          i++;
          continue;
        }
        plain = false;
        if (Number(q[1]) === 0) cur = cur.slice(0, -1);
        end();
        i = lazy(i + q[0].length);
        continue;
      }
      case '.':
      case '^':
      case '$':
      case ')':
      case ']':
      case '}':
        breaks();
        i++;
        continue;
      default: {
        // One UTF-16 unit at a time: without the `u` flag a quantifier applies to the last unit.
        literal(c);
        i++;
      }
    }
  }
  end();
  if (runs.length === 0) return null;
  let best = runs[0]!;
  for (const r of runs) if (r.length > best.length) best = r;
  return { text: best, folded, exact: plain && runs.length === 1 && !folded };
}

/**
 * Every character a match of `/source/flags` can hold, or null when that is not known from the
 * pattern as written: only literal characters, groups `(...)` and `(?:...)`, `|` and quantifiers
 * are read; a class, `.`, an escape of a letter or digit (`\d`, `\b`, `\1`, ...), an anchor, a
 * lookaround or inline flags give null, and so does a character outside ASCII under `i`. Such a
 * pattern's matches are context-free runs of these characters: a match that reaches into text
 * bordered on both sides by characters outside the set stays inside it (text-scan.ts decides a
 * row's raw string by its field values so).
 */
export function regexAlphabet(source: string, flags: string): Set<number> | null {
  for (const f of flags) if (!'imdsgF'.includes(f)) return null;
  const folded = flags.includes('i');
  const chars = new Set<number>();
  const add = (c: number): boolean => {
    if (folded && c >= 0x80) return false;
    chars.add(c);
    if (folded && ((c >= 65 && c <= 90) || (c >= 97 && c <= 122))) chars.add(c ^ 0x20);
    return true;
  };
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    switch (c) {
      case '\\': {
        const e = source[i + 1];
        if (e === undefined || isAsciiAlnum(e) || !add(e.charCodeAt(0))) return null;
        i++;
        break;
      }
      case '(':
        if (source[i + 1] === '?') {
          if (source[i + 2] !== ':') return null;
          i += 2;
        }
        break;
      case '{': {
        const q = QUANT.exec(source.slice(i, i + 32));
        if (q !== null) i += q[0].length - 1;
        else if (!add(c.charCodeAt(0))) return null;
        break;
      }
      case ')':
      case '|':
      case '*':
      case '+':
      case '?':
        break;
      case '[':
      case '.':
      case '^':
      case '$':
        return null;
      default:
        if (!add(c.charCodeAt(0))) return null;
    }
  }
  return chars;
}

/**
 * True when `re` matching a piece of a string means it matches the whole string: nothing in the
 * pattern looks outside its own match (no `^`, `$`, `\b`, `\B` or lookaround outside a class) and
 * it is neither global nor sticky (test() starting past 0). Read from the source that runs
 * (regex.ts's rewrite), escapes and classes skipped as such.
 */
export function regexLocal(re: RegExp): boolean {
  if (re.global || re.sticky) return false;
  const s = re.source;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\') {
      const e = s[++i];
      if (e === 'b' || e === 'B') return false;
    } else if (c === '[') {
      for (i++; i < s.length && s[i] !== ']'; i++) if (s[i] === '\\') i++;
    } else if (c === '^' || c === '$') return false;
    else if (c === '(' && s[i + 1] === '?' && s[i + 2] !== ':' && !(s[i + 2] === '<' && s[i + 3] !== '=' && s[i + 3] !== '!')) return false;
  }
  return true;
}
