/**
 * The query compiler's entry point: text in, CompiledQuery out. It parses, substitutes query
 * parameters, compiles the pipeline (pipeline.ts and the function registry), appends the implicit
 * `tail(200)` when there is no aggregate (api-facts §1.4), derives pruning from the leading
 * filters (pruning.ts) and works out the output column order. Every problem with the text is an
 * E_QUERY error pointing at the offending span.
 */
import type { Pipeline, Span } from './ast.js';
import { queryError } from './errors.js';
import { parsedQuery } from './params.js';
import { PipelineCompiler } from './pipeline.js';
import { derivePruning } from './pruning.js';
import { DEFAULT_LIMITS, type CompiledQuery, type MapStage, type QueryContext, type QueryLimits, type Stage } from './runtime.js';
import { STREAM_STAGE, streamAggregator } from './stream.js';
import type { PackedTable } from '../files/packed.js';

export interface CompileOptions {
  /** Values for `?param` placeholders (the request's `arguments`). */
  args?: Record<string, string>;
  ctx: QueryContext;
  limits?: QueryLimits;
  /** Lookup tables by the name the query uses (see file-refs.ts). */
  files?: Readonly<Record<string, PackedTable>>;
  /** A filter query ends in the stream collector (stream.ts) instead of the implicit tail(200). */
  stream?: boolean;
  /** `parsedQuery(text, args)`, when the caller has it already (compiling only reads the tree). */
  parsed?: Pipeline;
}

/**
 * One parse per request: the coordinator parses a request's text once (QueryService.prepare) and
 * keeps the tree here for that spec object, so the preamble, the file references and the compile
 * all read the same tree. Kept only while the spec object lives; a spec whose text or arguments
 * were replaced since (a copy with other text is another object anyway) is parsed again.
 */
const parsedSpecs = new WeakMap<object, { text: string; args: Readonly<Record<string, string>>; tree: Pipeline }>();

export function keepParsed(spec: { text: string; args: Readonly<Record<string, string>> }, tree: Pipeline): void {
  parsedSpecs.set(spec, { text: spec.text, args: spec.args, tree });
}

/** The tree kept for `spec` by keepParsed, if its text and arguments are still the ones parsed. */
export function keptParsed(spec: { text: string; args: Readonly<Record<string, string>> }): Pipeline | undefined {
  const k = parsedSpecs.get(spec);
  return k !== undefined && k.text === spec.text && k.args === spec.args ? k.tree : undefined;
}

export function compileQuery(text: string, opts: CompileOptions): CompiledQuery {
  const source = text.trim() === '' ? '*' : text;
  const limits = opts.limits ?? DEFAULT_LIMITS;
  const fail = (span: Span, message: string): never => {
    throw queryError(source, span, message);
  };
  const parsed: Pipeline = opts.parsed ?? parsedQuery(source, opts.args ?? {});
  refuseTableWithJoins(parsed, fail);
  const pc = new PipelineCompiler(source, opts.ctx, limits, opts.files ?? {});
  const infos = pc.pipeline(parsed, 'top');
  const isAggregate = infos.some((i) => i.stage.kind === 'agg');
  const streamed = !isAggregate && opts.stream === true;
  if (streamed) infos.push({ stage: { kind: 'agg', name: STREAM_STAGE, agg: streamAggregator() }, pure: false, order: (prev) => prev });
  else if (!isAggregate) infos.push(pc.callStage({ name: 'tail', args: [], span: { start: 0, end: 0 } }, 'top'));
  let fieldOrder: string[] | null = null;
  for (const i of infos) fieldOrder = i.order(fieldOrder);
  const stages: Stage[] = infos.map((i) => i.stage);
  const compiled: CompiledQuery = {
    text: source,
    stages,
    isAggregate,
    pruning: derivePruning(parsed.stages, fail),
    extraData: pc.extraData,
    fieldOrder: isAggregate ? fieldOrder : null,
  };
  if (streamed) compiled.streamed = true;
  if (pc.warnings.length > 0) compiled.warnings = pc.warnings;
  return compiled;
}

const JOINS = new Set(['join', 'selfjoin', 'selfjoinfilter']);

/**
 * query-functions.md §2.14: defineTable() cannot be combined with join(), selfJoin() or
 * selfJoinFilter(). preambleOf (subqueries.ts) refuses it before a query's subqueries run; this
 * covers every compile (alert and saved-search validation, tests), at the offending call.
 */
function refuseTableWithJoins(p: Pipeline, fail: (span: Span, message: string) => never): void {
  if (!p.stages.some((s) => s.kind === 'expr' && s.expr.k === 'call' && s.expr.call.name.toLowerCase() === 'definetable')) return;
  const todo: unknown[] = [p];
  while (todo.length > 0) {
    const v = todo.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      for (const x of v) todo.push(x);
      continue;
    }
    const o = v as Record<string, unknown>;
    if (typeof o.name === 'string' && Array.isArray(o.args) && JOINS.has(o.name.toLowerCase())) {
      fail(o.span as Span, `defineTable() cannot be combined with join(), selfJoin() or selfJoinFilter() in one query; match against the defined table with match(table=...) instead of ${o.name}()`);
    }
    for (const k in o) if (k !== 'span') todo.push(o[k]);
  }
}

/**
 * A parser script (src/parsers): the same language, compiled to per-event stages only. Aggregates
 * are refused, no implicit tail() is added, and lookup files are not available.
 */
export function compileParserStages(text: string, ctx: QueryContext): MapStage[] {
  const source = text.trim() === '' ? '*' : text;
  const parsed: Pipeline = parsedQuery(source, {});
  const pc = new PipelineCompiler(source, ctx, DEFAULT_LIMITS, null);
  return pc.pipeline(parsed, 'parser').map((i) => i.stage as MapStage);
}
