/**
 * Functions that read structure out of text: regex() (named groups to fields, optionally one event
 * per match), replace(), parseJson() (nested members flattened with dots and [i]), kvParse()
 * (key=value pairs) and parseTimestamp() (Java DateTimeFormatter patterns and epoch formats).
 */
import { jsonDepth } from '../../lib/json.js';
import { MAX_NESTING, MAX_VALUE_CHARS, valueTooLarge } from '../limits.js';
import { PerEntry } from '../per-entry.js';
import { compileRegex, groupsOf, type CompiledRegex } from '../regex.js';
import { ColumnSubstitution, substitution } from '../regex-substitute.js';
import type { Ev } from '../runtime.js';
import { parseNumber } from '../values.js';
import type { BoundArgs } from './args.js';
import { compileJavaPattern, parseJavaTime } from './javatime.js';
import { eventZone } from './zones.js';
import type { FnDef } from './types.js';

function regexArg(a: BoundArgs, name: string, defFlags: string): CompiledRegex {
  const r = a.regex(name)!;
  const flags = a.string('flags') ?? (r.flags === '' ? defFlags : r.flags);
  return compileRegex(r.source, a.has('flags') ? flags + r.flags : flags, (m) => a.fail(a.has('flags') ? 'flags' : name, m));
}

// --- regex ---------------------------------------------------------------------------------------

const regex: FnDef = {
  name: 'regex',
  params: [
    { name: 'regex', type: 'regex', unnamed: true, required: true },
    { name: 'field', type: 'field', default: '@rawstring' },
    { name: 'flags', type: 'string', default: 'm' },
    { name: 'strict', type: 'bool', default: 'true' },
    { name: 'repeat', type: 'bool', default: 'false' },
    { name: 'limit', type: 'number', default: '100' },
  ],
  filter(a) {
    const cr = regexArg(a, 'regex', 'm');
    const field = a.string('field', '@rawstring');
    return (e) => {
      const v = e.get(field);
      return v !== undefined && cr.re.test(v);
    };
  },
  stage(a) {
    const cr = regexArg(a, 'regex', 'm');
    const field = a.string('field', '@rawstring');
    const strict = a.bool('strict', true);
    const repeat = a.bool('repeat', false) || cr.repeat;
    const limit = a.number('limit', 100);
    if (!Number.isInteger(limit) || limit < 1) a.fail('limit', 'regex: limit must be a whole number of at least 1');
    if (!repeat) {
      return {
        run(e, emit) {
          const v = e.get(field);
          const m = v === undefined ? null : cr.re.exec(v);
          if (m === null) {
            if (!strict) emit(e);
            return;
          }
          for (const [n, x] of groupsOf(cr, m)) e.set(n, x);
          emit(e);
        },
      };
    }
    return {
      run(e, emit) {
        const v = e.get(field);
        const found: [string, string][][] = [];
        if (v !== undefined) {
          const re = cr.all;
          re.lastIndex = 0;
          let m: RegExpExecArray | null;
          while (found.length < limit && (m = re.exec(v)) !== null) {
            found.push(groupsOf(cr, m));
            if (m[0] === '') re.lastIndex++;
          }
        }
        if (found.length === 0) {
          if (!strict) emit(e);
          return;
        }
        for (let i = 0; i < found.length; i++) {
          const out = i === found.length - 1 ? e : e.clone();
          for (const [n, x] of found[i]!) out.set(n, x);
          emit(out);
        }
      },
    };
  },
};

// --- replace -------------------------------------------------------------------------------------

/** Java replacement syntax to JS: `${name}` becomes the renamed group, `\$` a literal dollar. */
function jsReplacement(text: string, cr: CompiledRegex): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length) {
      const n = text[++i]!;
      out += n === '$' ? '$$' : n;
      continue;
    }
    if (c === '$' && text[i + 1] === '{') {
      const close = text.indexOf('}', i + 2);
      if (close > 0) {
        const idx = cr.groupNames.indexOf(text.slice(i + 2, close));
        if (idx >= 0) {
          out += `$<g${idx}>`;
          i = close;
          continue;
        }
      }
    }
    out += c;
  }
  return out;
}

/**
 * The longest value in which replacing every match with `replacement` cannot pass the value bound
 * whatever matches (at most one match per unit and one at the end), or -1 when the replacement
 * refers to groups (its length then depends on the matches): decided once, not per value.
 */
function longestSafe(replacement: string): number {
  return replacement.includes('$') ? -1 : Math.floor((MAX_VALUE_CHARS - replacement.length) / (1 + replacement.length));
}

/**
 * Counts, without building it, how long `v` gets when every match of `re` is replaced, and refuses
 * a result past the value bound. A group reference (`$1`, `$&`) is at most the match it is in;
 * `` $` `` and `$'` at most the whole input.
 */
function checkReplaceSize(v: string, re: RegExp, replacement: string): void {
  const refs = replacement.split('$').length - 1;
  const wide = replacement.includes('$`') || replacement.includes("$'");
  let size = v.length;
  re.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(v)) !== null) {
    size += replacement.length + refs * (wide ? v.length : m[0].length) - m[0].length;
    if (size > MAX_VALUE_CHARS) throw valueTooLarge('replace', size);
    if (m[0] === '') re.lastIndex++;
  }
}

const replace: FnDef = {
  name: 'replace',
  params: [
    { name: 'regex', type: 'regex', unnamed: true, required: true },
    { name: 'with', type: 'string', aliases: ['replacement'], default: '' },
    { name: 'field', type: 'field', default: '@rawstring' },
    { name: 'as', type: 'string' },
    { name: 'flags', type: 'string', default: 'm' },
  ],
  stage(a) {
    const cr = regexArg(a, 'regex', 'm');
    const field = a.string('field', '@rawstring');
    const as = a.string('as', field);
    const replacement = jsReplacement(a.string('with', ''), cr);
    // A literal pattern with a plain replacement: no regex run for a value without the literal.
    const fast = substitution(cr, replacement);
    const safe = longestSafe(replacement);
    const one = (v: string): string => {
      if (v.length > safe) checkReplaceSize(v, cr.all, replacement);
      if (fast !== null) return fast(v);
      cr.all.lastIndex = 0;
      return v.replace(cr.all, replacement);
    };
    // A one-unit pattern over a stored text column: the block's column replaced at once; any
    // pattern over a dictionary column: each entry once.
    const column = safe < 0 ? null : ColumnSubstitution.of(cr, replacement, field, safe);
    const entries = PerEntry.of(field, one);
    return {
      run(e, emit) {
        let r = column === null ? undefined : column.rowValue(e);
        if (r === undefined && entries !== null) r = entries.rowValue(e);
        if (r === undefined) {
          const v = e.get(field);
          r = v === undefined ? null : one(v);
        }
        if (r !== null) e.set(as, r);
        emit(e);
      },
    };
  },
};

// --- parseJson -----------------------------------------------------------------------------------

const MAX_JSON_DEPTH = MAX_NESTING;

const parseJson: FnDef = {
  name: 'parseJson',
  params: [
    { name: 'field', type: 'field', unnamed: true, default: '@rawstring' },
    { name: 'prefix', type: 'string', default: '' },
    { name: 'exclude', type: 'strings' },
    { name: 'include', type: 'strings' },
    { name: 'excludeEmpty', type: 'bool', default: 'false' },
    { name: 'handleNull', type: 'string', default: 'keep' },
    { name: 'removePrefixes', type: 'strings', default: '[]' },
  ],
  stage(a) {
    const field = a.string('field', '@rawstring');
    const prefix = a.string('prefix', '');
    const exclude = a.list('exclude', []);
    const include = a.list('include', []);
    const excludeEmpty = a.bool('excludeEmpty', false);
    const handleNull = a.string('handleNull', 'keep').toLowerCase();
    if (!['keep', 'empty', 'discard'].includes(handleNull)) a.fail('handleNull', `parameter handleNull of function parseJson must be keep, empty or discard, not ${handleNull}`);
    // Longest first: a name loses the longest listed prefix it starts with.
    const removals = a.list('removePrefixes', []).filter((p) => p !== '').sort((x, y) => y.length - x.length);
    const under = (name: string, list: string[]): boolean => list.some((p) => name === p || name.startsWith(`${p}.`) || name.startsWith(`${p}[`));
    const put = (e: Ev, name: string, v: string): void => {
      // include/exclude name fields as they come out, prefix included (query-functions.md §1).
      const full = prefix + name;
      if (include.length > 0 && !under(full, include)) return;
      if (exclude.length > 0 && under(full, exclude)) return;
      if (excludeEmpty && v === '') return;
      const cut = removals.find((p) => name.startsWith(p) && name.length > p.length);
      e.set(cut === undefined ? full : prefix + name.slice(cut.length), v);
    };
    const walk = (e: Ev, v: unknown, name: string, depth: number): void => {
      if (v === null) {
        if (handleNull === 'keep') put(e, name, 'null');
        else if (handleNull === 'empty') put(e, name, '');
        return;
      }
      if (typeof v !== 'object') {
        put(e, name, String(v));
        return;
      }
      if (depth >= MAX_JSON_DEPTH) {
        put(e, name, JSON.stringify(v));
        return;
      }
      if (Array.isArray(v)) {
        v.forEach((x, i) => walk(e, x, `${name}[${i}]`, depth + 1));
        return;
      }
      const o = v as Record<string, unknown>;
      for (const k in o) walk(e, o[k], name === '' ? k : `${name}.${k}`, depth + 1);
    };
    return {
      run(e, emit) {
        const text = e.get(field);
        // Only an object or an array gives fields; other text is passed unchanged without JSON.parse
        // (a failed parse throws, which cost ~9 µs per event in bench/query/functions.mjs).
        if (text !== undefined && opensJson(text)) {
          // Deeper input is not parsed (nor walked): the event is kept and marked, as the ingest-side json parser does.
          // A text of at most 2 x MAX_JSON_DEPTH characters cannot nest deeper (each level opens and closes).
          if (text.length > 2 * MAX_JSON_DEPTH && jsonDepth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
            e.set('@error', 'true');
            e.set('@error_msg', `parseJson: nesting deeper than ${MAX_JSON_DEPTH} levels`);
            emit(e);
            return;
          }
          let parsed: unknown;
          let ok = true;
          try {
            parsed = JSON.parse(text);
          } catch {
            ok = false;
          }
          if (ok && parsed !== null && typeof parsed === 'object') walk(e, parsed, '', 0);
        }
        emit(e);
      },
    };
  },
};

/** Whether the first character after leading white space opens a JSON object or array. */
function opensJson(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 123 /* { */ || c === 91 /* [ */) return true;
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13) return false;
  }
  return false;
}

// --- kvParse -------------------------------------------------------------------------------------

function isKeyChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 46 || c === 45 || c === 64 || c === 91 || c === 93 || c >= 0x80;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

/** key=value pairs of `text` (`k=v`, `k="v"`, `k='v'`, `k = v`), in order. Linear in the text. */
export function kvPairs(text: string, sep: string, padding: boolean): [string, string][] {
  const out: [string, string][] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const at = text.indexOf(sep, i);
    if (at < 0) break;
    let ke = at;
    if (padding) while (ke > i && text.charCodeAt(ke - 1) === 32) ke--;
    let ks = ke;
    while (ks > i && isKeyChar(text.charCodeAt(ks - 1))) ks--;
    let p = at + sep.length;
    if (ks === ke) {
      i = p;
      continue;
    }
    // `k = v`: padding after the separator only when there is padding before it, so `a= b=2` is a="" and b=2.
    if (padding && ke < at) while (p < n && text.charCodeAt(p) === 32) p++;
    const q = text[p];
    let value: string;
    if (q === '"' || q === "'") {
      let j = p + 1;
      let v = '';
      while (j < n && text[j] !== q) {
        if (text[j] === '\\' && j + 1 < n) {
          v += text[j + 1];
          j += 2;
          continue;
        }
        v += text[j];
        j++;
      }
      value = v;
      i = Math.min(n, j + 1);
    } else {
      let j = p;
      while (j < n) {
        const c = text.charCodeAt(j);
        if (isSpace(c) || c === 44 || c === 59) break;
        j++;
      }
      value = text.slice(p, j);
      i = j;
    }
    out.push([text.slice(ks, ke), value]);
  }
  return out;
}

const kvParse: FnDef = {
  name: 'kvParse',
  params: [
    { name: 'field', type: 'field', unnamed: true, default: '@rawstring' },
    { name: 'as', type: 'string', default: '', aliases: ['prefix'] },
    { name: 'override', type: 'bool', default: 'false' },
    { name: 'excludeEmpty', type: 'bool', default: 'false' },
    { name: 'separator', type: 'string', default: '=' },
    { name: 'separatorPadding', type: 'string', default: 'unknown' },
    { name: 'onDuplicate', type: 'string', default: 'keepLast' },
  ],
  stage(a) {
    const field = a.string('field', '@rawstring');
    const prefix = a.string('as', '');
    const override = a.bool('override', false);
    const excludeEmpty = a.bool('excludeEmpty', false);
    const sep = a.string('separator', '=');
    if (sep === '') a.fail('separator', 'kvParse: the separator cannot be empty');
    const padding = a.string('separatorPadding', 'unknown').toLowerCase();
    if (!['unknown', 'yes', 'no'].includes(padding)) a.fail('separatorPadding', 'kvParse: separatorPadding must be unknown, yes or no');
    const dup = a.string('onDuplicate', 'keepLast');
    if (dup !== 'keepLast' && dup !== 'keepFirst') a.fail('onDuplicate', 'kvParse: onDuplicate must be keepLast or keepFirst');
    return {
      run(e, emit) {
        const text = e.get(field);
        if (text !== undefined) {
          const seen = new Set<string>();
          for (const [k, v] of kvPairs(text, sep, padding !== 'no')) {
            if (excludeEmpty && v === '') continue;
            const name = prefix + k;
            if (dup === 'keepFirst' && seen.has(name)) continue;
            if (!override && !seen.has(name) && e.has(name)) continue;
            seen.add(name);
            e.set(name, v);
          }
        }
        emit(e);
      },
    };
  },
};

// --- parseTimestamp ------------------------------------------------------------------------------

/** Epoch formats: how many places the decimal point moves to give milliseconds. */
const EPOCH_FORMATS: Record<string, number> = {
  millis: 0,
  milliseconds: 0,
  unixtimemillis: 0,
  seconds: 3,
  unixtimeseconds: 3,
  unixtime: 3,
  nanos: -6,
};

/**
 * Whole milliseconds of a decimal epoch value whose point moves `shift` places, computed on the
 * digits (1585145569.394 seconds and 19-digit nanos would lose a millisecond in floating point).
 */
export function shiftedEpoch(text: string, shift: number): number | undefined {
  const m = /^\s*([+-]?)(\d+)(?:\.(\d*))?\s*$/.exec(text);
  if (m === null) {
    const n = parseNumber(text);
    return n === undefined ? undefined : Math.floor(n * 10 ** shift);
  }
  const digits = m[2]! + (m[3] ?? '');
  const point = m[2]!.length + shift;
  const intDigits = point <= 0 ? '0' : digits.slice(0, point).padEnd(point, '0');
  const frac = point <= 0 ? digits : digits.slice(point);
  let v = BigInt(intDigits);
  if (m[1] === '-') v = -v - (/[1-9]/.test(frac) ? 1n : 0n);
  return Number(v);
}

const parseTimestamp: FnDef = {
  name: 'parseTimestamp',
  params: [
    { name: 'format', type: 'string', unnamed: true, default: "yyyy-MM-dd'T'HH:mm:ss[.SSSSSSSSS]XXXXX" },
    { name: 'field', type: 'field', required: true },
    { name: 'as', type: 'string', default: '@timestamp' },
    { name: 'timezone', type: 'string' },
    { name: 'timezoneAs', type: 'string', default: '@timezone (with as=@timestamp)' },
    { name: 'timezoneField', type: 'field', default: '@timezone' },
    { name: 'addErrors', type: 'bool', default: 'true' },
    { name: 'caseSensitive', type: 'bool', default: 'true' },
  ],
  stage(a) {
    const format = a.string('format', "yyyy-MM-dd'T'HH:mm:ss[.SSSSSSSSS]XXXXX");
    const field = a.string('field')!;
    const as = a.string('as', '@timestamp');
    // A text without a zone is read in timezone=, else in the event's timezoneField zone; neither: an error.
    const zoneOf = eventZone(a);
    const tzAs = a.string('timezoneAs', as === '@timestamp' ? '@timezone' : '');
    const addErrors = a.bool('addErrors', true);
    const caseSensitive = a.bool('caseSensitive', true);
    const scale = EPOCH_FORMATS[format.toLowerCase()];
    const compiled = scale === undefined ? compileJavaPattern(format) : null;
    const toks = typeof compiled === 'string' ? a.fail('format', compiled) : compiled;
    const failed = (e: Ev, msg: string): void => {
      if (!addErrors) return;
      e.set('@error', 'true');
      e.set('@error_msg', `parseTimestamp: ${msg}`);
    };
    return {
      run(e, emit) {
        const text = e.get(field);
        if (text === undefined) {
          failed(e, `the field ${field} is missing`);
          emit(e);
          return;
        }
        if (scale !== undefined) {
          const n = shiftedEpoch(text, scale);
          if (n === undefined) failed(e, `"${text.slice(0, 80)}" is not a number`);
          else e.set(as, String(n));
          emit(e);
          return;
        }
        const r = parseJavaTime(toks!, text.trim(), zoneOf(e), caseSensitive);
        if (typeof r === 'string') failed(e, r);
        else {
          e.set(as, String(r.ms));
          if (tzAs !== '' && r.zoneText !== null) e.set(tzAs, r.zoneText);
        }
        emit(e);
      },
    };
  },
};

export const parsingFunctions: FnDef[] = [regex, replace, parseJson, kvParse, parseTimestamp];
