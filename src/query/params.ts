/**
 * Query parameters (`?name`, `?{name=default}`, api-facts §4.1): replaced by the request's
 * `arguments` before compiling, so the rest of the compiler never sees a parameter. A parameter
 * standing alone as a filter becomes free text; in a comparison it becomes the compared value; in
 * an expression or function argument it becomes a string.
 */
import type { Arg, Call, Expr, Filter, MatchArm, Pipeline, Span, Stage, Value } from './ast.js';
import { queryError } from './errors.js';
import { parseQuery } from './parser.js';

export type ParamFail = (span: Span, message: string) => never;

/**
 * Trees of recently asked texts without arguments, by text: dashboards, alerts and benchmarks ask
 * the same few texts again and again, and a request then neither parses nor substitutes (parsing
 * alone took 3-7 us and made the tree's garbage for the peers' small questions, docs/benchmarks.md
 * 2026-11-29 "req21"). Nothing changes a tree once parsed (test/unit/query/parse-once.test.ts);
 * a cached tree is deep-frozen all the same, so a consumer that tried would throw rather than
 * change another request's query. Bounded: the oldest text out first; long texts are not kept.
 */
export const PARSED_TEXTS = 256;
const PARSED_TEXT_MAX_CHARS = 8 * 1024;
const parsedTexts = new Map<string, Pipeline>();

function deepFreeze(v: unknown): void {
  if (typeof v !== 'object' || v === null || Object.isFrozen(v)) return;
  Object.freeze(v);
  for (const x of Object.values(v)) deepFreeze(x);
}

function noArgs(args: Readonly<Record<string, string>>): boolean {
  for (const _ in args) return false;
  return true;
}

/** The syntax tree of a query's text (empty: `*`) with its parameters substituted; throws E_QUERY. */
export function parsedQuery(text: string, args: Readonly<Record<string, string>>): Pipeline {
  const source = text.trim() === '' ? '*' : text;
  const keep = source.length <= PARSED_TEXT_MAX_CHARS && noArgs(args);
  if (keep) {
    const kept = parsedTexts.get(source);
    if (kept !== undefined) return kept;
  }
  const tree = substituteParams(parseQuery(source), args, (span: Span, message: string): never => {
    throw queryError(source, span, message);
  });
  if (keep) {
    if (parsedTexts.size >= PARSED_TEXTS) parsedTexts.delete(parsedTexts.keys().next().value!);
    deepFreeze(tree);
    parsedTexts.set(source, tree);
  }
  return tree;
}

/**
 * The defaults the query declares (`?{name=default}`, anywhere): a declaration such as a first step
 * `?{signal="*"} | ...` gives every `?signal` of the query its default (query-functions.md §2.10).
 * The first declaration of a name wins.
 */
function declaredDefaults(p: Pipeline): Map<string, string> {
  const out = new Map<string, string>();
  const todo: unknown[] = [p];
  while (todo.length > 0) {
    const v = todo.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) todo.push(v[i]);
      continue;
    }
    const o = v as Record<string, unknown>;
    if (o.k === 'param' && typeof o.name === 'string' && typeof o.default === 'string' && !out.has(o.name)) out.set(o.name, o.default);
    for (const k in o) if (k !== 'span') todo.push(o[k]);
  }
  return out;
}

export function substituteParams(p: Pipeline, args: Readonly<Record<string, string>>, fail: ParamFail): Pipeline {
  const declared = declaredDefaults(p);
  const lookup = (name: string, def: string | null, span: Span): string => {
    if (Object.hasOwn(args, name)) return args[name]!;
    if (def !== null) return def;
    const d = declared.get(name);
    if (d !== undefined) return d;
    return fail(span, `the query parameter ${name} has no value; pass it in arguments or give a default with ?{${name}=...}`);
  };

  const pipeline = (pl: Pipeline): Pipeline => ({ stages: pl.stages.map(stage), span: pl.span });

  const call = (c: Call): Call => {
    if (c.name.toLowerCase() === 'beta:param') {
      // beta:param(name, as=x): the parameter's value, as a string, takes the name's place.
      return {
        name: c.name,
        span: c.span,
        args: c.args.map((a) => {
          const isName = a.name === null || a.name.toLowerCase() === 'parameter';
          const v = a.value;
          const n = v.k === 'str' ? v.v : v.k === 'ident' ? v.name : null;
          if (!isName || n === null) return { name: a.name, span: a.span, value: expr(a.value) };
          return { name: a.name, span: a.span, value: { k: 'str', v: lookup(n, null, a.span), span: a.span } };
        }),
      };
    }
    return {
      name: c.name,
      span: c.span,
      args: c.args.map((a) => {
        const out: Arg = { name: a.name, span: a.span, value: expr(a.value) };
        if (a.subquery !== undefined) out.subquery = { include: a.subquery.include === null ? null : expr(a.subquery.include) };
        return out;
      }),
    };
  };

  const arm = (a: MatchArm): MatchArm => {
    const p = a.pattern;
    let pattern: MatchArm['pattern'] = p;
    if (p.k === 'param') pattern = { k: 'str', v: lookup(p.name, p.default, p.span), quoted: true };
    else if (p.k === 'call') pattern = { k: 'call', call: call(p.call) };
    return { pattern, body: pipeline(a.body), span: a.span };
  };

  const stage = (s: Stage): Stage => {
    switch (s.kind) {
      case 'expr':
        return { kind: 'expr', expr: filter(s.expr), span: s.span };
      case 'assign':
        return { kind: 'assign', target: s.target, value: expr(s.value), span: s.span };
      case 'fieldOp':
        return { ...s, call: call(s.call) };
      case 'case':
        return { kind: 'case', branches: s.branches.map(pipeline), span: s.span };
      case 'match':
        return { kind: 'match', field: s.field, arms: s.arms.map(arm), span: s.span };
      case 'list':
        return { kind: 'list', calls: s.calls.map(call), span: s.span };
      case 'link':
        return s;
    }
  };

  const value = (v: Value): Value => (v.k === 'param' ? { k: 'str', v: lookup(v.name, v.default, v.span), quoted: false, span: v.span } : v);

  const filter = (f: Filter): Filter => {
    switch (f.k) {
      case 'and':
      case 'or':
        return { k: f.k, left: filter(f.left), right: filter(f.right), span: f.span };
      case 'not':
        return { k: 'not', expr: filter(f.expr), span: f.span };
      case 'compare':
        return { k: 'compare', field: f.field, op: f.op, value: value(f.value), span: f.span };
      case 'call':
        return { k: 'call', call: call(f.call), span: f.span };
      case 'param':
        return { k: 'text', value: lookup(f.name, f.default, f.span), quoted: false, span: f.span };
      default:
        return f;
    }
  };

  const expr = (e: Expr): Expr => {
    switch (e.k) {
      case 'param':
        return { k: 'str', v: lookup(e.name, e.default, e.span), span: e.span };
      case 'binary':
        return { k: 'binary', op: e.op, left: expr(e.left), right: expr(e.right), span: e.span };
      case 'unary':
        return { k: 'unary', op: e.op, expr: expr(e.expr), span: e.span };
      case 'call':
        return { k: 'call', call: call(e.call), span: e.span };
      case 'array':
        return { k: 'array', items: e.items.map(expr), span: e.span };
      case 'block':
        return { k: 'block', pipeline: pipeline(e.pipeline), span: e.span };
      default:
        return e;
    }
  };

  return pipeline(p);
}
