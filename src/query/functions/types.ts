/**
 * What a query function is to the compiler: a parameter spec and hooks that build the runtime
 * pieces (a per-event stage, a mergeable aggregator, a side-effect-free filter predicate, or a
 * per-event value for expressions). The registry (registry.ts) maps lower-cased names to these.
 */
import type { Call, Expr, Filter, Pipeline, Span } from '../ast.js';
import type { Aggregator, Ev, MapStage, QueryContext, QueryLimits } from '../runtime.js';
import type { BoundArgs } from './args.js';
import type { PackedTable } from '../../files/packed.js';

/** How an argument's value is read (checked when the call is bound). */
export type ParamType =
  /** A string (quoted or bare word; numbers taken as written). */
  | 'string'
  | 'number'
  /** A positive count, or `max` (returned as Infinity). */
  | 'limit'
  | 'bool'
  /** A field name (bare or quoted). */
  | 'field'
  /** One field name or an array of them. */
  | 'fields'
  /** One string or an array of them. */
  | 'strings'
  /** One number or an array of them. */
  | 'numbers'
  /** A `/regex/flags` literal or a string holding the pattern. */
  | 'regex'
  /** Aggregate functions: a call, an array of calls, or a `{ pipeline }`. */
  | 'aggs'
  /** Any expression, interpreted by the function. */
  | 'expr';

export interface ParamSpec {
  name: string;
  type: ParamType;
  required?: boolean;
  /** The parameter an unnamed (first) argument binds to. */
  unnamed?: boolean;
  /** Documentation of the default (the function applies it). */
  default?: string;
  /** Other accepted names (`with` / `replacement`). */
  aliases?: string[];
}

/** A field value read per event; undefined when there is none. */
export type ValueFn = (e: Ev) => string | undefined;

/** An aggregate as the compiler sees it: the runtime aggregator plus what it outputs. */
export interface AggSpec {
  agg: Aggregator<any>;
  /** Output field names when known (stats conflict check, fieldOrder). */
  outputs: string[] | null;
  /** At most one row for any input (count, avg, ...): stats can merge such rows into one. */
  oneRow: boolean;
  /** Passes rows through with their columns (head, tail, sort): the column order stays as it was. */
  keepsColumns?: boolean;
}

/** A compiled pipeline stage with what the compiler tracks about it. */
export interface StageInfo {
  stage: MapStage | { kind: 'agg'; name: string; agg: Aggregator<any> };
  /** Only drops events, never changes them (pruning may look past it; case needs no copy). */
  pure: boolean;
  /** How the stage changes the output column order (null: unknown afterwards). */
  order: (prev: string[] | null) => string[] | null;
  /** For aggregates: the spec (function=, stats). */
  aggSpec?: AggSpec;
  /** For pure filters: the predicate (adjacent ones are fused into one stage). */
  pred?: (e: Ev) => boolean;
}

export interface CompileEnv {
  /** The query text (for error messages). */
  readonly text: string;
  readonly ctx: QueryContext;
  readonly limits: QueryLimits;
  /** The product's extraData (timechart keys). */
  readonly extraData: Record<string, string>;
  fail(span: Span, message: string): never;
  /** A warning known at compile time (e.g. a span enlarged to stay within the bucket limit). */
  warn(message: string): void;
  /** Compiles a call used as an aggregate (function= arguments). */
  aggCall(call: Call): AggSpec;
  /** Compiles `{ pipeline }` used as an aggregate (function={ ... }). */
  aggPipeline(p: Pipeline, span: Span): AggSpec;
  /**
   * Compiles `{ pipeline }` of per-event stages as a test: true when it emits the event (it may
   * change the event it is given; pass a copy to keep the original).
   */
  subFilter(p: Pipeline): (e: Ev) => boolean;
  /** Compiles `{ pipeline }` of per-event stages into a runner that collects what it emits. */
  subStages(p: Pipeline): (e: Ev, out: Ev[]) => void;
  /** Compiles an expression into a per-event value. */
  expr(e: Expr): ValueFn;
  /** Compiles an expression into a per-event boolean (test(), if()). */
  cond(e: Expr): (e: Ev) => boolean;
  /** Lookup tables by the name the query uses (match(), lookup()); null where files cannot be read. */
  readonly files: Readonly<Record<string, PackedTable>> | null;
  /** Whether an aggregate came before the stage being compiled (in this pipeline). */
  readonly priorAggregate: boolean;
  /** Where the stage being compiled is (sequence and source functions check it). */
  readonly where: 'top' | 'branch' | 'sub' | 'parser';
}

export interface FnDef {
  /** Canonical name, as messages print it (`timeChart`). */
  name: string;
  params: ParamSpec[];
  /** Arguments are free-form (`eval(x = a + 1)`): no binding against params; read `call.args`. */
  freeArgs?: boolean;
  /** The parameter `x := fn(...)` sets; default `as` when the function has it. */
  assignParam?: string;
  /** For `value` functions used as a stage: the field written without `as=` (default `_<name>`). */
  valueAs?: string;
  /** Must follow an aggregate that orders its rows (sequence functions: accumulate, neighbor, ...). */
  afterOrdering?: boolean;
  /** Takes named subqueries `name: { ... } include: [...]` besides its parameters (correlate). */
  namedSubqueries?: boolean;
  /** Only in parsers (copyEvent). */
  parserOnly?: boolean;
  /** Calls compiled before this one in stage position (rdns() before any aggregate: a tail()). */
  before?(call: Call, env: CompileEnv): Call[] | undefined;
  /** An aggregate function. */
  agg?(a: BoundArgs, env: CompileEnv): AggSpec;
  /** A per-event stage. */
  stage?(a: BoundArgs, env: CompileEnv): { run: MapStage['run']; pure?: boolean; order?: StageInfo['order']; prepare?: MapStage['prepare'] };
  /** A filter without side effects, for use inside and/or/not (`!in(...)`). */
  filter?(a: BoundArgs, env: CompileEnv): (e: Ev) => boolean;
  /**
   * The same test as `filter`, in filter syntax, when the call has one (`wildcard("*x*", field=f)`
   * is `f="*x*"`): a scan may then evaluate it on a block's columns (columnar.ts) as it does the
   * filter written out. It must keep exactly the events `filter` keeps; null when there is none.
   */
  filterSyntax?(a: BoundArgs): Filter | null;
  /** A value per event, for use inside expressions (`4 / lower(a)`). */
  value?(a: BoundArgs, env: CompileEnv): ValueFn;
}
