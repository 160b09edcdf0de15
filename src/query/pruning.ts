/**
 * What the leading filters of a query let the executor skip: datasources whose tags rule out every
 * event, and blocks whose bloom filter lacks a token every match must contain. Only the stages
 * before the first one that is not a pure filter count (a stage that creates or changes fields
 * ends the prefix: a later `field=value` may then compare a value that is not stored).
 *
 * Both answers are conservative. The tag predicate uses three-valued logic (a filter on anything
 * but a stored tag is "unknown") and returns false only when the filters are certainly false. The
 * bloom tokens are only those a match must contain as whole bloom tokens, computed exactly as
 * src/segments/bloom.ts computes them: whole lower-cased values for `field=value`, and for free
 * text or wildcard pieces only the alphanumeric runs bounded by non-token characters inside the
 * search text itself (at most 64 characters, as the bloom keeps them). Free text searches the
 * stored fields too (query-functions.md §2.2): its words (and those of a field wildcard) are gram
 * words, which a block's gram filter can rule out from segment format 4 on (it holds the grams of
 * every field value there; before, only @rawstring's, and the scan ignores them for such blocks).
 */
import type { Filter, Stage } from './ast.js';
import { fold, isTokenUnit } from './casefold.js';
import { comparePredicate, conjuncts, extractingRegex, type Pred } from './filter.js';
import { MapEvent, type BlockNeeds, type Pruning } from './runtime.js';
import { GRAM } from '../segments/grams.js';
import { regexLiteral } from './regex-literal.js';
import type { Span } from './ast.js';

const MAX_TOKEN = 64;
/** Longer search words are checked by their first MAX_WORD - GRAM + 1 grams (enough to rule a block out). */
const MAX_WORD = 36;
const MAX_ALTERNATIVES = 16;
/** Filter functions that never change an event (pruning may look past them). */
const PURE_FILTER_CALLS = new Set(['in', 'test', 'cidr']);

type Fail = (span: Span, message: string) => never;

/** Tokens of `s` that are whole token runs: bounded inside `s`, or by `s`'s ends where those are value ends. */
export function boundedTokens(s: string, leftBounded: boolean, rightBounded: boolean): string[] {
  const out: string[] = [];
  let start = -1;
  for (let i = 0; i <= s.length; i++) {
    const word = i < s.length && isTokenUnit(s.charCodeAt(i));
    if (word) {
      if (start < 0) start = i;
      continue;
    }
    if (start < 0) continue;
    const okLeft = start > 0 || leftBounded;
    const okRight = i < s.length || rightBounded;
    if (okLeft && okRight) out.push(fold(s.slice(start, Math.min(i, start + MAX_TOKEN))));
    start = -1;
  }
  return out;
}

function wildcardTokens(pattern: string, anchored: boolean): string[] {
  const pieces = pattern.split('*');
  const out: string[] = [];
  pieces.forEach((p, i) => {
    out.push(...boundedTokens(p, anchored && i === 0, anchored && i === pieces.length - 1));
  });
  return out;
}

/**
 * Every token run of free-text search pieces at least a gram long, folded and capped at MAX_WORD
 * characters: whatever bounds it in the search text, a match lies inside one token run of
 * @rawstring, so all its grams are in that block's gram filter.
 */
export function gramWords(pieces: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of pieces) {
    let start = -1;
    for (let i = 0; i <= p.length; i++) {
      if (i < p.length && isTokenUnit(p.charCodeAt(i))) {
        if (start < 0) start = i;
        continue;
      }
      if (start >= 0 && i - start >= GRAM) out.push(fold(p.slice(start, Math.min(i, start + MAX_WORD))));
      start = -1;
    }
  }
  return out;
}

type Dnf = BlockNeeds[] | null;

function uniq(tokens: string[]): string[] {
  return [...new Set(tokens)];
}

function and(a: Dnf, b: Dnf): Dnf {
  if (a === null) return b;
  if (b === null) return a;
  if (a.length * b.length > MAX_ALTERNATIVES) return a.length <= b.length ? a : b;
  const out: BlockNeeds[] = [];
  for (const x of a) for (const y of b) out.push({ tokens: uniq([...x.tokens, ...y.tokens]), words: uniq([...x.words, ...y.words]) });
  return out;
}

function or(a: Dnf, b: Dnf): Dnf {
  if (a === null || b === null) return null;
  if (a.length + b.length > MAX_ALTERNATIVES) return null;
  return [...a, ...b];
}

function single(tokens: string[], words: string[] = []): Dnf {
  return tokens.length === 0 && words.length === 0 ? null : [{ tokens: uniq(tokens), words: uniq(words) }];
}

/** Block needs for one filter (null: the block filters cannot rule anything out). */
export function bloomOf(f: Filter): Dnf {
  switch (f.k) {
    case 'and':
      return and(bloomOf(f.left), bloomOf(f.right));
    case 'or':
      return or(bloomOf(f.left), bloomOf(f.right));
    case 'text':
      // Free text searches @rawstring and the stored fields. The bloom holds the token runs of both,
      // so whole token runs of the search text are needed; a format 4 gram filter holds the grams
      // of both, so every gram of each word is needed too.
      return single(wildcardTokens(f.value, false), gramWords(f.value.split('*')));
    case 'regex': {
      // A bare regex searches @rawstring and the stored fields like free text: its required
      // literal (regex-literal.ts; ASCII only under `i`, so folding finds it) is in every match.
      const lit = regexLiteral(f.source, f.flags);
      return lit === null ? null : single(boundedTokens(lit.text, false, false), gramWords([lit.text]));
    }
    case 'compare': {
      if (f.field.startsWith('@') || f.field.startsWith('#') || f.value.k !== 'str') return null;
      const v = f.value;
      if (f.op === '=') {
        if (v.v.includes('*')) return single(wildcardTokens(v.v, true), gramWords(v.v.split('*')));
        // The whole value, lower-cased unit by unit (the bloom hashes whole values uncapped).
        return v.v === '' ? null : single([fold(v.v)]);
      }
      if (f.op === 'like') return single(wildcardTokens(v.v, false), gramWords(v.v.split('*')));
      return null;
    }
    default:
      return null;
  }
}

type TV = 0 | 1 | 2; // false, true, unknown
const F: TV = 0;
const T: TV = 1;
const U: TV = 2;
type TagEval = (tags: Readonly<Record<string, string>>) => TV;

function tagEval(f: Filter, fail: Fail, used: { any: boolean }): TagEval {
  switch (f.k) {
    case 'all':
      return () => T;
    case 'and': {
      const a = tagEval(f.left, fail, used);
      const b = tagEval(f.right, fail, used);
      return (t) => {
        const x = a(t);
        if (x === F) return F;
        const y = b(t);
        if (y === F) return F;
        return x === T && y === T ? T : U;
      };
    }
    case 'or': {
      const a = tagEval(f.left, fail, used);
      const b = tagEval(f.right, fail, used);
      return (t) => {
        const x = a(t);
        if (x === T) return T;
        const y = b(t);
        if (y === T) return T;
        return x === F && y === F ? F : U;
      };
    }
    case 'not': {
      const a = tagEval(f.expr, fail, used);
      return (t) => {
        const x = a(t);
        return x === U ? U : x === T ? F : T;
      };
    }
    case 'compare': {
      if (!f.field.startsWith('#') || f.field === '#repo') return () => U;
      used.any = true;
      const name = f.field.slice(1);
      const field = f.field;
      // The very predicate the events are filtered with, applied to the tag value.
      const pred: Pred = comparePredicate(f, { fail });
      return (t) => {
        if (!Object.hasOwn(t, name)) return U;
        return pred(new MapEvent([[field, t[name]!]])) ? T : F;
      };
    }
    default:
      return () => U;
  }
}

/** The filters of the leading pure-filter prefix of a pipeline, in order. */
export function leadingFilters(stages: readonly Stage[], fail: Fail): Filter[] {
  const out: Filter[] = [];
  for (const s of stages) {
    if (s.kind !== 'expr') break;
    for (const c of conjuncts(s.expr)) {
      if (c.k === 'call') {
        if (!PURE_FILTER_CALLS.has(c.call.name.toLowerCase())) return out;
        continue;
      }
      out.push(c);
      // A regex that extracts fields still filters, but what follows may read the new fields.
      if (extractingRegex(c, { fail }) !== null) return out;
    }
  }
  return out;
}

export function derivePruning(stages: readonly Stage[], fail: Fail): Pruning {
  const filters = leadingFilters(stages, fail);
  let bloom: Dnf = null;
  for (const f of filters) bloom = and(bloom, bloomOf(f));
  const used = { any: false };
  const evals = filters.map((f) => tagEval(f, fail, used));
  const tags = used.any ? (t: Readonly<Record<string, string>>) => evals.every((e) => e(t) !== F) : null;
  return { tags, bloom };
}
