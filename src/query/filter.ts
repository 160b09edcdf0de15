/**
 * Filter expressions (api-facts §4.1) compiled into predicates: free text, `/regex/` on @rawstring,
 * field comparisons with wildcards, regexes and numbers, and `and`/`or`/`not`. Named-group
 * extraction is not done here: only a regex standing as a top-level conjunct extracts, and the
 * pipeline compiler builds that stage itself (regexStage).
 *
 * Decisions (query-functions.md §2.2): free text is an unanchored, case-insensitive match (folded
 * as the bloom folds, casefold.ts) of @rawstring and of every field the event was stored with
 * (not @id, @timestamp, @ingesttimestamp, @timezone or tags, and not fields the pipeline created);
 * field comparisons are anchored and case-sensitive; `*` is a wildcard in unquoted and quoted
 * patterns alike; `like` is an unanchored, case-sensitive wildcard match. A bare `/re/` step
 * searches @rawstring first, then the stored fields.
 */
import type { Call, Filter, Span, Value } from './ast.js';
import { foldedIncludes } from './casefold.js';
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

/** Names free text never searches (query-functions.md §2.2). */
const NOT_SEARCHED = new Set(['@id', '@timestamp', '@ingesttimestamp', '@timezone', RAW]);

/** True for the stored fields free text searches (not the built-ins, not tags). */
export function searchedField(name: string): boolean {
  return !NOT_SEARCHED.has(name) && name.charCodeAt(0) !== 35;
}

/**
 * The values free text searches besides @rawstring: the fields the event was stored with, as
 * `storedFields()` gives them when the event knows (a block row, a live event), else every field.
 */
export function searchedValues(e: Ev, visit: (v: string) => boolean): boolean {
  const stored = (e as { storedFields?: () => Iterable<[string, string]> }).storedFields;
  if (stored !== undefined) {
    for (const [n, v] of stored.call(e)) {
      if (NOT_SEARCHED.has(n) || n.charCodeAt(0) === 35 /* # */) continue;
      if (visit(v)) return true;
    }
    return false;
  }
  for (const n of e.names()) {
    if (NOT_SEARCHED.has(n) || n.charCodeAt(0) === 35) continue;
    const v = e.get(n);
    if (v !== undefined && visit(v)) return true;
  }
  return false;
}

/** The test free text applies to one value: an unanchored match (`*` = any run), ignoring case. */
export function textTest(value: string): (s: string) => boolean {
  if (hasWildcard(value)) return compileWildcard(value, { anchored: false, ignoreCase: true });
  return foldedIncludes(value);
}

/** Free text: an unanchored match (`*` = any run, quoted or not) of @rawstring or a stored field, ignoring case. */
export function textPredicate(value: string, _quoted: boolean): Pred {
  const test = textTest(value);
  return (e) => {
    const raw = e.get(RAW);
    if (raw !== undefined && test(raw)) return true;
    return searchedValues(e, test);
  };
}

/**
 * The test a string value applies under `=`: presence for `*` (quoted or not), an anchored wildcard,
 * or exact equality (quoted or not: `status="404"` and `status=404` are the same filter; stored
 * numbers are canonical text, so this is also the numeric comparison).
 */
function equalityTest(v: Extract<Value, { k: 'str' }>): ((s: string) => boolean) | 'present' {
  if (/^\*+$/.test(v.v)) return 'present';
  if (hasWildcard(v.v)) return compileWildcard(v.v, { anchored: true, ignoreCase: false });
  const want = v.v;
  return (s) => s === want;
}

export function comparePredicate(f: Extract<Filter, { k: 'compare' }>, hooks: Pick<FilterHooks, 'fail'>): Pred {
  const field = f.field;
  const test = compareTest(f, hooks);
  return (e) => test(e.get(field));
}

/**
 * What a comparison asks of the field's value (undefined: the event lacks the field), so the column
 * path (columnar.ts) can ask it once per dictionary entry.
 */
export function compareTest(f: Extract<Filter, { k: 'compare' }>, hooks: Pick<FilterHooks, 'fail'>): (s: string | undefined) => boolean {
  const v = f.value;
  if (v.k === 'param') return hooks.fail(v.span, `query parameter ${v.name} was not substituted`);
  if (v.k === 'regex') {
    if (f.op !== '=' && f.op !== '!=') return hooks.fail(f.span, `a regex can only be compared with = or !=, not ${f.op}`);
    const cr = regexFor(v.source, v.flags, v.span, hooks);
    const re = cr.re;
    if (f.op === '=') return (s) => s !== undefined && re.test(s);
    return (s) => s === undefined || !re.test(s);
  }
  switch (f.op) {
    case '=':
    case '!=': {
      const t = equalityTest(v);
      const neg = f.op === '!=';
      if (t === 'present') return neg ? (s) => s === undefined : (s) => s !== undefined;
      return (s) => {
        if (s === undefined) return neg;
        return t(s) !== neg;
      };
    }
    case 'like': {
      const t = compileWildcard(v.v, { anchored: false, ignoreCase: false });
      return (s) => s !== undefined && t(s);
    }
    default: {
      const n = compareNumber(f, hooks);
      const op = f.op;
      return (s) => {
        const x = parseNumber(s);
        if (x === undefined) return false;
        return op === '<' ? x < n : op === '<=' ? x <= n : op === '>' ? x > n : x >= n;
      };
    }
  }
}

/** The number on the right of `<`, `<=`, `>`, `>=` (E_QUERY when there is none). */
export function compareNumber(f: Extract<Filter, { k: 'compare' }>, hooks: Pick<FilterHooks, 'fail'>): number {
  const v = f.value;
  if (v.k !== 'str') return hooks.fail(f.span, `${f.field} ${f.op}: comparisons with ${f.op} need a number on the right-hand side`);
  const n = parseNumber(v.v);
  if (n === undefined) return hooks.fail(v.span, `${f.field} ${f.op} ${v.v}: comparisons with ${f.op} need a number on the right-hand side`);
  return n;
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
      const test = (s: string): boolean => re.test(s);
      return (e) => {
        const raw = e.get(RAW);
        if (raw !== undefined && re.test(raw)) return true;
        return searchedValues(e, test);
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

/**
 * The run() of a stage that keeps events matching `cr` on `field` and sets its named groups. On
 * @rawstring (a bare `/re/` step) the stored fields are tried after it, and the first that matches
 * gives the groups.
 */
export function regexStage(field: string, cr: CompiledRegex): (e: Ev, emit: Emit) => void {
  const re = cr.re;
  if (field === RAW) {
    return (e, emit) => {
      let m: RegExpExecArray | null = null;
      const s = e.get(RAW);
      if (s !== undefined) m = re.exec(s);
      if (m === null) {
        searchedValues(e, (v) => {
          m = re.exec(v);
          return m !== null;
        });
      }
      if (m === null) return;
      for (const [name, value] of groupsOf(cr, m)) e.set(name, value);
      emit(e);
    };
  }
  return (e, emit) => {
    const s = e.get(field);
    if (s === undefined) return;
    const m = re.exec(s);
    if (m === null) return;
    for (const [name, value] of groupsOf(cr, m)) e.set(name, value);
    emit(e);
  };
}
