/**
 * Filter expressions (api-facts §4.1) compiled into predicates: free text, `/regex/` on @rawstring,
 * field comparisons with wildcards, regexes and numbers, and `and`/`or`/`not`. Named-group
 * extraction is not done here: only a regex standing as a top-level conjunct extracts, and the
 * pipeline compiler builds that stage itself (regexStage).
 *
 * Decisions: free text is a case-insensitive substring search of @rawstring (folded as the bloom
 * folds, casefold.ts); field comparisons are case-sensitive; `*` is a wildcard only in unquoted
 * words, a quoted `*` is a literal star; `like` is an unanchored (substring) wildcard match.
 */
import type { Call, Filter, Span, Value } from './ast.js';
import { fold } from './casefold.js';
import { compileRegex, groupsOf, type CompiledRegex } from './regex.js';
import type { Emit, Ev } from './runtime.js';
import { parseNumber } from './values.js';
import { compileWildcard, hasWildcard } from './wildcard.js';

export type Pred = (e: Ev) => boolean;

export interface FilterHooks {
  fail(span: Span, message: string): never;
  /** A function call used inside and/or/not (must be a filter function). */
  callFilter(call: Call, span: Span): Pred;
}

const RAW = '@rawstring';

export function regexFor(source: string, flags: string, span: Span, hooks: Pick<FilterHooks, 'fail'>): CompiledRegex {
  return compileRegex(source, flags, (msg) => hooks.fail(span, msg));
}

/** Free text: a substring (unquoted `*` = any run) of @rawstring, ignoring case. */
export function textPredicate(value: string, quoted: boolean): Pred {
  if (!quoted && hasWildcard(value)) {
    const test = compileWildcard(value, { anchored: false, ignoreCase: true });
    return (e) => {
      const raw = e.get(RAW);
      return raw !== undefined && test(raw);
    };
  }
  const needle = fold(value);
  return (e) => {
    const raw = e.get(RAW);
    return raw !== undefined && fold(raw).includes(needle);
  };
}

/** The test a string value applies under `=` (exact, wildcard, or presence for a bare `*`). */
function equalityTest(v: Extract<Value, { k: 'str' }>): ((s: string) => boolean) | 'present' {
  if (!v.quoted && v.v === '*') return 'present';
  if (!v.quoted && hasWildcard(v.v)) return compileWildcard(v.v, { anchored: true, ignoreCase: false });
  const want = v.v;
  return (s) => s === want;
}

export function comparePredicate(f: Extract<Filter, { k: 'compare' }>, hooks: Pick<FilterHooks, 'fail'>): Pred {
  const field = f.field;
  const v = f.value;
  if (v.k === 'param') return hooks.fail(v.span, `query parameter ${v.name} was not substituted`);
  if (v.k === 'regex') {
    if (f.op !== '=' && f.op !== '!=') return hooks.fail(f.span, `a regex can only be compared with = or !=, not ${f.op}`);
    const cr = regexFor(v.source, v.flags, v.span, hooks);
    const re = cr.re;
    if (f.op === '=') {
      return (e) => {
        const s = e.get(field);
        return s !== undefined && re.test(s);
      };
    }
    return (e) => {
      const s = e.get(field);
      return s === undefined || !re.test(s);
    };
  }
  switch (f.op) {
    case '=':
    case '!=': {
      const t = equalityTest(v);
      const neg = f.op === '!=';
      if (t === 'present') return neg ? (e) => !e.has(field) : (e) => e.has(field);
      return (e) => {
        const s = e.get(field);
        if (s === undefined) return neg;
        return t(s) !== neg;
      };
    }
    case 'like': {
      const t = v.quoted ? (s: string) => s.includes(v.v) : compileWildcard(v.v, { anchored: false, ignoreCase: false });
      return (e) => {
        const s = e.get(field);
        return s !== undefined && t(s);
      };
    }
    default: {
      const n = parseNumber(v.v);
      if (n === undefined) return hooks.fail(v.span, `${field} ${f.op} ${v.v}: comparisons with ${f.op} need a number on the right-hand side`);
      const op = f.op;
      return (e) => {
        const x = parseNumber(e.get(field));
        if (x === undefined) return false;
        return op === '<' ? x < n : op === '<=' ? x <= n : op === '>' ? x > n : x >= n;
      };
    }
  }
}

/** A filter expression as a predicate (no field extraction). */
export function compileFilter(f: Filter, hooks: FilterHooks): Pred {
  switch (f.k) {
    case 'all':
      return () => true;
    case 'and': {
      const a = compileFilter(f.left, hooks);
      const b = compileFilter(f.right, hooks);
      return (e) => a(e) && b(e);
    }
    case 'or': {
      const a = compileFilter(f.left, hooks);
      const b = compileFilter(f.right, hooks);
      return (e) => a(e) || b(e);
    }
    case 'not': {
      const a = compileFilter(f.expr, hooks);
      return (e) => !a(e);
    }
    case 'text':
      return textPredicate(f.value, f.quoted);
    case 'regex': {
      const re = regexFor(f.source, f.flags, f.span, hooks).re;
      return (e) => {
        const raw = e.get(RAW);
        return raw !== undefined && re.test(raw);
      };
    }
    case 'compare':
      return comparePredicate(f, hooks);
    case 'call':
      return hooks.callFilter(f.call, f.span);
    case 'param':
      return hooks.fail(f.span, `query parameter ${f.name} was not substituted`);
  }
}

/** The conjuncts of a top-level `and` chain, left to right. */
export function conjuncts(f: Filter, out: Filter[] = []): Filter[] {
  if (f.k === 'and') {
    conjuncts(f.left, out);
    conjuncts(f.right, out);
  } else out.push(f);
  return out;
}

/** A regex that may extract fields: `/re/` on @rawstring or `field = /re/`, with named groups. */
export function extractingRegex(f: Filter, hooks: Pick<FilterHooks, 'fail'>): { field: string; cr: CompiledRegex } | null {
  if (f.k === 'regex') {
    const cr = regexFor(f.source, f.flags, f.span, hooks);
    return cr.groupNames.length > 0 ? { field: RAW, cr } : null;
  }
  if (f.k === 'compare' && f.op === '=' && f.value.k === 'regex') {
    const cr = regexFor(f.value.source, f.value.flags, f.value.span, hooks);
    return cr.groupNames.length > 0 ? { field: f.field, cr } : null;
  }
  return null;
}

/** The run() of a stage that keeps events matching `cr` on `field` and sets its named groups. */
export function regexStage(field: string, cr: CompiledRegex): (e: Ev, emit: Emit) => void {
  const re = cr.re;
  return (e, emit) => {
    const s = e.get(field);
    if (s === undefined) return;
    const m = re.exec(s);
    if (m === null) return;
    for (const [name, value] of groupsOf(cr, m)) e.set(name, value);
    emit(e);
  };
}
