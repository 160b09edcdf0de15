/**
 * The pipeline compiler: syntax-tree stages to runtime stages. Filters become predicate stages
 * (adjacent ones fused), function calls are bound against the registry and built by their
 * definitions, `:=` and `=~` are rewritten into calls or expressions, `case`/`match` run compiled
 * branch pipelines, and `[a(), b()]` is stats(). It is also the CompileEnv the function
 * definitions call back into for nested aggregates and expressions.
 */
import type { Arg, Call, Expr, Filter, MatchArm, Pipeline, Span, Stage } from './ast.js';
import { queryError } from './errors.js';
import { compileExpr, type ValueFn } from './expressions.js';
import { compileFilter, conjuncts, extractingRegex, regexFor, regexStage, type Pred } from './filter.js';
import { BoundArgs } from './functions/args.js';
import { statsOf } from './functions/aggregates.js';
import { lookupFunction } from './functions/registry.js';
import type { AggSpec, CompileEnv, FnDef, StageInfo } from './functions/types.js';
import { groupsOf } from './regex.js';
import { wasDropped, type Aggregator, type Emit, type Ev, type MapStage, type QueryContext, type QueryLimits } from './runtime.js';
import { truthy } from './values.js';
import { compileWildcard, hasWildcard } from './wildcard.js';
import type { PackedTable } from '../files/packed.js';

/**
 * Where a pipeline is: the query itself, a case/match branch (no aggregates), a function={...}
 * subquery, or a parser script (no aggregates: it runs on one event at a time).
 */
export type Where = 'top' | 'branch' | 'sub' | 'parser';

function noAggregateHere(where: Where, name: string): string | null {
  if (where === 'branch') return `aggregate function ${name} cannot be used inside case or match branches`;
  if (where === 'parser') return `aggregate function ${name} cannot be used in a parser: a parser runs on one event at a time`;
  return null;
}

const keepOrder = (prev: string[] | null): string[] | null => prev;
const unknownOrder = (): null => null;

/** One function per stage, built once (no closure per event). */
export function chainStages(maps: readonly MapStage[], last: Emit): Emit {
  let next = last;
  for (let i = maps.length - 1; i >= 0; i--) {
    const stage = maps[i]!;
    const after = next;
    next = (e: Ev) => stage.run(e, after);
  }
  return next;
}

/**
 * Runs stages over finished rows on one thread (a later aggregate gets one state); the warnings of
 * those aggregates go to `warn` when given.
 */
export function runRows(stages: readonly StageInfo['stage'][], rows: Ev[], warn?: (w: string) => void): Ev[] {
  let cur = rows;
  for (const s of stages) {
    const out: Ev[] = [];
    if (s.kind === 'map') {
      const push = (e: Ev): void => {
        out.push(e);
      };
      for (const r of cur) s.run(r, push);
      cur = out;
    } else {
      const st = s.agg.init();
      for (const r of cur) s.agg.add(st, r);
      if (warn !== undefined) for (const w of s.agg.warnings?.(st) ?? []) warn(w);
      cur = s.agg.finish(st);
    }
  }
  return cur;
}

/**
 * runRows for the coordinator: a stage with `prepare` (reverseDns) first gets the rows it will see
 * and may wait; `wrap` runs each synchronous part (the executor meters them).
 */
export async function runRowsAsync(stages: readonly StageInfo['stage'][], rows: Ev[], warn: (w: string) => void, wrap: <T>(fn: () => T) => T = (fn) => fn()): Promise<Ev[]> {
  let cur = rows;
  let from = 0;
  for (let i = 0; i < stages.length; i++) {
    const s = stages[i]!;
    if (s.kind !== 'map' || s.prepare === undefined) continue;
    const before = cur;
    cur = wrap(() => runRows(stages.slice(from, i), before, warn));
    for (const w of await s.prepare(cur)) warn(w);
    from = i;
  }
  const last = cur;
  return wrap(() => runRows(stages.slice(from), last, warn));
}

function mapInfo(name: string, run: MapStage['run'], pure: boolean, order: StageInfo['order'] = pure ? keepOrder : unknownOrder): StageInfo {
  return { stage: { kind: 'map', name, run }, pure, order };
}

function predInfo(name: string, pred: Pred, filters?: readonly Filter[]): StageInfo {
  const info = mapInfo(name, (e, emit) => {
    if (pred(e)) emit(e);
  }, true);
  info.pred = pred;
  // The filter's syntax, for the column path (columnar.ts).
  if (filters !== undefined) (info.stage as MapStage).filters = filters;
  return info;
}

export class PipelineCompiler implements CompileEnv {
  readonly extraData: Record<string, string> = {};
  readonly warnings: string[] = [];
  priorAggregate = false;
  where: Where = 'top';

  constructor(
    readonly text: string,
    readonly ctx: QueryContext,
    readonly limits: QueryLimits,
    /** Lookup tables by the name the query uses; null where files cannot be read (parsers). */
    readonly files: Readonly<Record<string, PackedTable>> | null = null,
  ) {}

  fail(span: Span, message: string): never {
    throw queryError(this.text, span, message);
  }

  warn(message: string): void {
    if (!this.warnings.includes(message)) this.warnings.push(message);
  }

  private def(call: Call): FnDef {
    const def = lookupFunction(call.name);
    if (def === undefined) {
      const q = JSON.stringify(call.name);
      return this.fail({ start: call.span.start, end: Math.min(call.span.end, call.span.start + call.name.length) }, `Unknown function ${q}`);
    }
    return def;
  }

  private bind(call: Call): BoundArgs {
    return new BoundArgs(this.def(call), call, this);
  }

  // --- CompileEnv -----------------------------------------------------------------------------

  aggCall(call: Call): AggSpec {
    const a = this.bind(call);
    if (a.def.agg === undefined) return this.fail(call.span, `function ${a.def.name} is not an aggregate function and cannot be used here`);
    // An aggregate given as an argument (function=..., [a(), b()]) is inside another function.
    const saved = this.where;
    this.where = 'sub';
    try {
      return a.def.agg(a, this);
    } finally {
      this.where = saved;
    }
  }

  aggPipeline(p: Pipeline, span: Span): AggSpec {
    const infos = this.pipeline(p, 'sub');
    const at = infos.findIndex((i) => i.stage.kind === 'agg');
    if (at < 0) return this.fail(span, 'the subquery needs an aggregate function');
    const pre = infos.slice(0, at).map((i) => i.stage as MapStage);
    const inner = (infos[at]!.stage as { agg: Aggregator<unknown> }).agg;
    const post = infos.slice(at + 1).map((i) => i.stage);
    let cur: unknown;
    const feed = chainStages(pre, (e) => inner.add(cur, e));
    const agg: Aggregator<unknown> = {
      name: 'subquery',
      init: () => inner.init(),
      add(st, e) {
        cur = st;
        feed(e);
      },
      merge: (into, other) => inner.merge(into, other),
      finish: (st) => runRows(post, inner.finish(st)),
    };
    if (inner.warnings !== undefined) {
      const w = inner.warnings.bind(inner);
      agg.warnings = (st) => w(st);
    }
    let order: string[] | null = infos[at]!.aggSpec?.outputs ?? null;
    for (const i of infos.slice(at + 1)) order = i.order(order);
    const oneRow = post.length === 0 && infos[at]!.aggSpec?.oneRow === true;
    return { agg, outputs: order, oneRow };
  }

  subFilter(p: Pipeline): (e: Ev) => boolean {
    const infos = this.pipeline(p, 'branch');
    // Only pure filters: their predicates, with no runner (no array or closure per event).
    if (infos.every((i) => i.pred !== undefined)) {
      const preds = infos.map((i) => i.pred!);
      if (preds.length === 1) return preds[0]!;
      return (e) => {
        for (const f of preds) if (!f(e)) return false;
        return true;
      };
    }
    const run = this.branchRunner(infos).run;
    return (e) => {
      const out: Ev[] = [];
      run(e, out);
      return out.length > 0;
    };
  }

  subStages(p: Pipeline): (e: Ev, out: Ev[]) => void {
    return this.branchRunner(this.pipeline(p, 'branch')).run;
  }

  expr(e: Expr): ValueFn {
    return compileExpr(e, { fail: (s, m) => this.fail(s, m), call: (c) => this.valueCall(c) });
  }

  cond(e: Expr): (ev: Ev) => boolean {
    const v = this.expr(e);
    return (ev) => truthy(v(ev));
  }

  private valueCall(call: Call): ValueFn {
    const a = this.bind(call);
    if (a.def.value === undefined) return this.fail(call.span, `function ${a.def.name} cannot be used in an expression`);
    return a.def.value(a, this);
  }

  private filterCall(call: Call, span: Span): Pred {
    const a = this.bind(call);
    if (a.def.filter === undefined) return this.fail(span, `function ${a.def.name} cannot be used inside a filter expression (with and, or, not)`);
    return a.def.filter(a, this);
  }

  private predicate(f: Filter): Pred {
    return compileFilter(f, { fail: (s, m) => this.fail(s, m), callFilter: (c, s) => this.filterCall(c, s) });
  }

  // --- stages ---------------------------------------------------------------------------------

  pipeline(p: Pipeline, where: Where): StageInfo[] {
    const out: StageInfo[] = [];
    let afterAgg = false;
    const saved = { prior: this.priorAggregate, where: this.where };
    // Preamble (query-functions.md §2.1): setTimeInterval() at most once and first, then defineTable()s.
    let preamble: 'open' | 'tables' | 'closed' = where === 'top' ? 'open' : 'closed';
    try {
      for (const s of p.stages) {
        const pre = s.kind === 'expr' && s.expr.k === 'call' ? s.expr.call.name.toLowerCase() : null;
        if (pre === 'settimeinterval' || pre === 'definetable') {
          const name = pre === 'settimeinterval' ? 'setTimeInterval' : 'defineTable';
          if (preamble === 'closed' || (pre === 'settimeinterval' && preamble !== 'open')) {
            this.fail(s.span, `${name}() must be in the query's preamble: setTimeInterval() first (at most once), then defineTable(), before any filter or other function`);
          }
          preamble = 'tables';
        } else preamble = 'closed';
        if (afterAgg && s.kind === 'expr') {
          const text = freeTextIn(s.expr);
          if (text !== null) this.fail(text, 'Free-text search is only allowed before the first aggregate function; search a field instead (field=value or field=/regex/)');
        }
        this.priorAggregate = afterAgg;
        this.where = where;
        const infos = this.stage(s, where);
        out.push(...infos);
        if (infos.some((i) => i.stage.kind === 'agg')) afterAgg = true;
      }
    } finally {
      this.priorAggregate = saved.prior;
      this.where = saved.where;
    }
    return fusePredicates(out);
  }

  /** A call in stage position (also a top-level conjunct). */
  callStage(call: Call, where: Where): StageInfo {
    const a = this.bind(call);
    const def = a.def;
    if (def.parserOnly === true && where !== 'parser') return this.fail(call.span, `function ${def.name} can only be used in a parser`);
    if (def.afterOrdering === true && !this.priorAggregate) {
      return this.fail(call.span, `function ${def.name} must follow an aggregate function that orders events, such as head(), sort(), groupBy(), bucket() or timeChart()`);
    }
    if (def.agg !== undefined) {
      const refused = noAggregateHere(where, def.name);
      if (refused !== null) return this.fail(call.span, refused);
      const spec = def.agg(a, this);
      const order = spec.keepsColumns === true ? keepOrder : (): string[] | null => spec.outputs;
      return { stage: { kind: 'agg', name: def.name, agg: spec.agg }, pure: false, order, aggSpec: spec };
    }
    if (def.stage !== undefined) {
      const s = def.stage(a, this);
      const pure = s.pure === true;
      const info = mapInfo(def.name, s.run, pure, s.order ?? (pure ? keepOrder : unknownOrder));
      if (s.prepare !== undefined) (info.stage as MapStage).prepare = s.prepare;
      return info;
    }
    if (def.filter !== undefined) {
      const syntax = def.filterSyntax?.(a) ?? null;
      return predInfo(def.name, def.filter(a, this), syntax === null ? undefined : [syntax]);
    }
    if (def.value !== undefined) {
      const as = a.string('as') ?? def.valueAs ?? `_${def.name.toLowerCase()}`;
      const v = def.value(a, this);
      return mapInfo(def.name, (e, emit) => {
        const r = v(e);
        if (r !== undefined) e.set(as, r);
        emit(e);
      }, false, addField(as));
    }
    return this.fail(call.span, `function ${def.name} cannot be used as a pipeline stage`);
  }

  private stage(s: Stage, where: Where): StageInfo[] {
    switch (s.kind) {
      case 'expr':
        return this.filterStage(s.expr, where);
      case 'assign':
        return [this.assign(s.target, s.value, s.span, where)];
      case 'fieldOp': {
        const call = withArg(s.call, 'field', s.field, s.span, (sp, m) => this.fail(sp, m));
        if (s.negate === true) {
          const p = this.filterCall(call, s.span);
          return [predInfo('filter', (e) => !p(e))];
        }
        return [this.callStage(call, where)];
      }
      case 'case':
        return [this.caseStage(s.branches, s.span)];
      case 'match':
        return [this.matchStage(s.field, s.arms)];
      case 'list': {
        if (where === 'branch') return this.fail(s.span, 'aggregate functions cannot be used inside case or match branches');
        if (where === 'parser') return this.fail(s.span, 'aggregate functions cannot be used in a parser: a parser runs on one event at a time');
        const spec = statsOf(s.calls.map((c) => this.aggCall(c)), s.span, this);
        return [{ stage: { kind: 'agg', name: 'stats', agg: spec.agg }, pure: false, order: () => spec.outputs, aggSpec: spec }];
      }
      case 'link':
        // correlate() takes its subqueries' links out before compiling them; anywhere else a link has no meaning.
        return this.fail(s.span, 'The link "<=>" can only be used inside a named subquery of correlate() (name: { ... | field <=> other.field })');
    }
  }

  private filterStage(f: Filter, where: Where): StageInfo[] {
    if (f.k === 'call') {
      // rdns() before any aggregate is tail(limit) | rdns(...) (the product's own equivalent).
      const before = lookupFunction(f.call.name)?.before?.(f.call, this);
      if (before === undefined) return [this.callStage(f.call, where)];
      const first = before.map((c) => this.callStage(c, where));
      this.priorAggregate ||= first.some((i) => i.stage.kind === 'agg');
      return [...first, this.callStage(f.call, where)];
    }
    // Function names are reserved words: as free text they must be quoted (query-functions.md §2.1).
    const todo: Filter[] = [f];
    while (todo.length > 0) {
      const x = todo.pop()!;
      if (x.k === 'text' && !x.quoted && lookupFunction(x.value) !== undefined) {
        this.fail(x.span, `"${x.value}" is a function name; write "${x.value}" in quotes to search for it as text, or call it as ${x.value}(...)`);
      }
      if (x.k === 'and' || x.k === 'or') todo.push(x.left, x.right);
      else if (x.k === 'not') todo.push(x.expr);
    }
    const out: StageInfo[] = [];
    for (const c of conjuncts(f)) {
      if (c.k === 'call') {
        out.push(this.callStage(c.call, where));
        continue;
      }
      const ex = extractingRegex(c, { fail: (s, m) => this.fail(s, m) });
      if (ex !== null) {
        out.push(mapInfo('regex', regexStage(ex.field, ex.cr), false, keepOrder));
        continue;
      }
      out.push(predInfo('filter', this.predicate(c), [c]));
    }
    return out;
  }

  private assign(target: string, value: Expr, span: Span, where: Where): StageInfo {
    if (value.k === 'call') {
      const def = this.def(value.call);
      const asParam = def.assignParam ?? (def.params.some((p) => p.name === 'as') ? 'as' : null);
      if (asParam !== null && (def.agg !== undefined || def.stage !== undefined || def.value !== undefined)) {
        return this.callStage(withArg(value.call, asParam, target, span, (sp, m) => this.fail(sp, m)), where);
      }
    }
    const v = this.expr(value);
    // No value (a missing field, a non-number): nothing is assigned and the event goes on
    // (query-functions.md §2.5).
    return mapInfo(`${target} :=`, (e, emit) => {
      const r = v(e);
      if (r !== undefined) e.set(target, r);
      emit(e);
    }, false, addField(target));
  }

  private branchRunner(infos: StageInfo[]): { pure: boolean; run: (e: Ev, out: Ev[]) => void } {
    const maps = infos.map((i) => i.stage as MapStage);
    let sink: Ev[] = [];
    const feed = chainStages(maps, (e) => {
      sink.push(e);
    });
    return {
      pure: infos.every((i) => i.pure),
      run(e, out) {
        const saved = sink;
        sink = out;
        try {
          feed(e);
        } finally {
          sink = saved;
        }
      },
    };
  }

  private caseStage(branches: Pipeline[], span: Span): StageInfo {
    if (branches.length === 0) return this.fail(span, 'case needs at least one branch');
    const runners = branches.map((b) => {
      if (b.stages.length === 0) this.fail(b.span, 'an empty case branch is not allowed');
      return this.branchRunner(this.pipeline(b, 'branch'));
    });
    const n = runners.length;
    return mapInfo('case', (e, emit) => {
      for (let i = 0; i < n; i++) {
        const r = runners[i]!;
        const out: Ev[] = [];
        // A branch that changes the event gets a copy unless it is the last chance: when it then
        // drops the event, the next branch must see the original.
        const input = r.pure || i === n - 1 ? e : e.clone();
        r.run(input, out);
        if (out.length > 0) {
          for (const o of out) emit(o);
          return;
        }
        if (wasDropped(input)) return;
      }
    }, false);
  }

  private matchStage(field: string, arms: MatchArm[]): StageInfo {
    type ArmTest = (v: string | undefined, e: Ev) => boolean;
    const compiled = arms.map((arm) => {
      let test: ArmTest;
      const p = arm.pattern;
      if (p.k === 'any') test = () => true;
      else if (p.k === 'param') return this.fail(arm.span, `query parameter ${p.name} was not substituted`);
      else if (p.k === 'call') {
        // A filter function guard receives the field (`in(values=[1, 2])`).
        const pred = this.filterCall(withArg(p.call, 'field', field, arm.span, (sp, m) => this.fail(sp, m)), arm.span);
        test = (_v, e) => pred(e);
      } else if (p.k === 'str') {
        const want = p.v;
        // `"*"` and `**` match when the field exists (a bare `*` arm is 'any'); `*` is a wildcard quoted or not.
        if (/^\*+$/.test(want)) test = (v) => v !== undefined;
        else if (hasWildcard(want)) {
          const w = compileWildcard(want, { anchored: true, ignoreCase: false });
          test = (v) => v !== undefined && w(v);
        } else test = (v) => v === want;
      } else {
        const cr = regexFor(p.source, p.flags, arm.span, { fail: (s, m) => this.fail(s, m) });
        test = (v, e) => {
          if (v === undefined) return false;
          const m = cr.re.exec(v);
          if (m === null) return false;
          for (const [name, value] of groupsOf(cr, m)) e.set(name, value);
          return true;
        };
      }
      return { test, body: this.branchRunner(this.pipeline(arm.body, 'branch')) };
    });
    return mapInfo('match', (e, emit) => {
      const v = e.get(field);
      for (const arm of compiled) {
        if (!arm.test(v, e)) continue;
        const out: Ev[] = [];
        arm.body.run(e, out);
        for (const o of out) emit(o);
        return;
      }
    }, false);
  }
}

/** The span of the first free-text term (text or bare regex) of a filter, or null. Iterative. */
function freeTextIn(f: Filter): Span | null {
  const todo: Filter[] = [f];
  while (todo.length > 0) {
    const x = todo.pop()!;
    if (x.k === 'text' || x.k === 'regex') return x.span;
    if (x.k === 'and' || x.k === 'or') todo.push(x.right, x.left);
    else if (x.k === 'not') todo.push(x.expr);
  }
  return null;
}

function addField(name: string): StageInfo['order'] {
  return (prev) => (prev === null ? null : prev.includes(name) ? prev : [...prev, name]);
}

/** `call` with one more named argument (`as=` from `:=`, `field=` from `=~`). */
function withArg(call: Call, name: string, value: string, span: Span, fail: (s: Span, m: string) => never): Call {
  if (call.args.some((a) => a.name !== null && a.name.toLowerCase() === name.toLowerCase())) {
    fail(span, `${call.name}() already has a ${name} argument`);
  }
  const arg: Arg = { name, value: { k: 'ident', name: value, span }, span };
  return { name: call.name, args: [...call.args, arg], span: call.span };
}

/** Adjacent predicate stages become one (one call per event instead of several). */
function fusePredicates(infos: StageInfo[]): StageInfo[] {
  const out: StageInfo[] = [];
  let preds: Pred[] = [];
  // The fused stage's syntax, while every part has one.
  let asts: Filter[] | null = [];
  const flush = (): void => {
    if (preds.length === 0) return;
    const ps = preds;
    const fs = asts ?? undefined;
    preds = [];
    asts = [];
    if (ps.length === 1) {
      out.push(predInfo('filter', ps[0]!, fs));
      return;
    }
    out.push(predInfo('filter', (e) => {
      for (const p of ps) if (!p(e)) return false;
      return true;
    }, fs));
  };
  for (const i of infos) {
    const p = i.pred;
    if (p !== undefined) {
      preds.push(p);
      const f = i.stage.kind === 'map' ? i.stage.filters : undefined;
      asts = asts === null || f === undefined ? null : [...asts, ...f];
    } else {
      flush();
      out.push(i);
    }
  }
  flush();
  return out;
}
