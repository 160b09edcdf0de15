/**
 * What a compiled query is made of, shared by the compiler (compile.ts, functions/) and the
 * executor (executor.ts, scan.ts): the event interface every function works against, per-event
 * stages, mergeable aggregators, and the context of one query run.
 *
 * Values are strings, as in the product: `@timestamp` is the decimal epoch-ms text (`timestamp()`
 * gives it as a number); numbers are parsed where a function needs them.
 */

import type { Filter } from './ast.js';
import { chargeMade } from './memory.js';
import type { RdnsSettings } from './rdns.js';

/** One event (or, after an aggregate, one result row). Field names are data: any string is a name. */
export interface Ev {
  get(name: string): string | undefined;
  set(name: string, value: string): void;
  remove(name: string): void;
  has(name: string): boolean;
  /** Every field name present, in a stable order (materializes a lazily read event). */
  names(): string[];
  /**
   * Removes every field not in `names` (select()): as `remove` of each other name, without listing
   * them first (which, on a block row, decodes every column of the block).
   */
  keepOnly(names: ReadonlySet<string>): void;
  /** `@timestamp` as epoch ms; NaN when absent or not a number. */
  timestamp(): number;
  /** An independent copy (for functions that emit several events from one). */
  clone(): Ev;
}

/** A plain event over a Map: rows, live events, test events. */
export class MapEvent implements Ev {
  readonly fields: Map<string, string>;
  /** Names the pipeline added (free text does not search them, query-functions.md §2.2). */
  private created: Set<string> | null = null;
  /** The values the event came with of fields the pipeline changed or removed (free text sees these). */
  private original: Map<string, string> | null = null;

  constructor(fields?: Iterable<readonly [string, string]> | Record<string, string>) {
    if (fields === undefined) this.fields = new Map();
    else if (Symbol.iterator in Object(fields)) this.fields = new Map(fields as Iterable<readonly [string, string]>);
    else this.fields = new Map(Object.entries(fields as Record<string, string>));
  }

  get(name: string): string | undefined {
    return this.fields.get(name);
  }
  set(name: string, value: string): void {
    chargeMade(value.length);
    const was = this.fields.get(name);
    if (was === undefined) {
      if (this.original?.has(name) !== true) (this.created ??= new Set()).add(name);
    } else this.keepOriginal(name, was);
    this.fields.set(name, value);
  }
  remove(name: string): void {
    const was = this.fields.get(name);
    if (was !== undefined) this.keepOriginal(name, was);
    this.fields.delete(name);
  }
  private keepOriginal(name: string, value: string): void {
    if (this.created?.has(name) === true || this.original?.has(name) === true) return;
    (this.original ??= new Map()).set(name, value);
  }
  has(name: string): boolean {
    return this.fields.has(name);
  }
  names(): string[] {
    return [...this.fields.keys()];
  }
  keepOnly(names: ReadonlySet<string>): void {
    for (const n of [...this.fields.keys()]) if (!names.has(n)) this.remove(n);
  }
  /** The fields the event came with (what free text searches), not those the pipeline added. */
  *storedFields(): Iterable<[string, string]> {
    const created = this.created;
    const original = this.original;
    for (const [n, v] of this.fields) if (created === null || !created.has(n)) yield [n, original?.get(n) ?? v];
    if (original !== null) for (const [n, v] of original) if (!this.fields.has(n)) yield [n, v];
  }
  timestamp(): number {
    const t = this.fields.get('@timestamp');
    return t === undefined ? Number.NaN : Number(t);
  }
  clone(): Ev {
    const c = new MapEvent(this.fields);
    if (this.created !== null) c.created = new Set(this.created);
    if (this.original !== null) c.original = new Map(this.original);
    return c;
  }
}

const dropped = new WeakSet<Ev>();

/** dropEvent(): the event is discarded for good (a case/match branch that drops it still wins). */
export function markDropped(e: Ev): void {
  dropped.add(e);
}

export function wasDropped(e: Ev): boolean {
  return dropped.has(e);
}

/** Every field of an event as [name, value] pairs (for output and for crossing threads). */
export function entriesOf(e: Ev): [string, string][] {
  const out: [string, string][] = [];
  for (const n of e.names()) {
    const v = e.get(n);
    if (v !== undefined) out.push([n, v]);
  }
  return out;
}

/** The context of one query run: the same values on every worker and on the coordinator. */
export interface QueryContext {
  /** Resolved time range, epoch ms, both inclusive. */
  start: number;
  end: number;
  /** `timeZoneOffsetMinutes` of the request (east of UTC positive). */
  timeZoneOffsetMinutes: number;
  /** The query's notion of now (epoch ms), fixed at its start. */
  now: number;
  /**
   * Parsers only: the clock now() reads for each event (a parser is compiled once per thread and
   * runs for as long as the node does, so a `now` fixed at compile time would be wrong). Never set
   * on queries, whose contexts travel to worker threads as data.
   */
  clock?: () => number;
  /** Live query: the window moves; aggregates are recomputed per poll. */
  live: boolean;
  /** Data files some functions read (config query.geoip_file, asn_file, ioc_file); absent: not configured. */
  dataFiles?: DataFiles;
  /** Reverse DNS for reverseDns()/rdns() (config query.rdns_*); absent: not available here. */
  rdns?: RdnsSettings;
}

export interface DataFiles {
  geoip?: string;
  asn?: string;
  ioc?: string;
}

/** Sink for what a stage emits. */
export type Emit = (e: Ev) => void;

/**
 * A per-event stage (filter or transform): calls `emit` zero times (dropped), once, or several
 * times (split, repeated regex). It may mutate the event it was given and emit it.
 */
export interface MapStage {
  kind: 'map';
  /** For error messages and explain output. */
  name: string;
  run(e: Ev, emit: Emit): void;
  /**
   * Work over all the rows before `run` sees them, which may wait (reverseDns() asks name servers
   * here); only on stages after the first aggregate. Resolves to warnings for the result.
   */
  prepare?(rows: readonly Ev[]): Promise<string[]>;
  /**
   * A pure filter stage: the conjuncts it keeps events by (every one must hold), so the scan may
   * evaluate them on a block's columns instead (columnar.ts). Absent: events one by one.
   */
  filters?: readonly Filter[];
}

/**
 * A block's rows as the column fast paths read them (src/query/columnar.ts, over a BlockView):
 * the rows selected so far and the columns by name, decoded once per block.
 */
export interface ColumnRows {
  /** Selected row indexes, ascending. */
  sel: Int32Array;
  /** How many of `sel` are selected. */
  count: number;
  ts(): readonly number[];
  /** A dictionary-encoded stored field (values and one code per row; `absent` marks rows without it); null otherwise. */
  dict(name: string): { d: readonly string[]; codes: Uint8Array | Uint16Array; absent: number } | null;
  /** A stored field's values by row (null/undefined where absent), or null when the block has no such column. */
  strings(name: string): readonly (string | null | undefined)[] | null;
  /** An integer-typed stored field (every row holds one) as numbers; null for other encodings. */
  ints(name: string): readonly number[] | null;
  /** An IPv4-typed stored field (every row holds one): four bytes per row; null for other encodings. */
  ipv4(name: string): Uint8Array | null;
  /** A stored field's text column as stored (`{e: "u"}`: one UTF-8 run and a length varint per row); null for other encodings. */
  textRun(name: string): { b: Uint8Array; l: Uint8Array } | null;
  /** The same text column's values as integers when the thread keeps them so (kept-ints.ts textInts); null otherwise. */
  keptTextInts?(name: string): Int32Array | null;
  /** That kept column's distinct values and their counts, as pairs (kept-ints.ts textIntCounts); null when it is not kept. */
  keptTextIntCounts?(name: string): Int32Array | null;
}

/**
 * A block's selected rows as its head's column summaries give them (segment format 6,
 * columnar.ts summaryRows): no row is read. Each reader answers null when the summaries do not
 * decide it (then the block is read).
 */
export interface SummaryRows {
  /** How many rows are selected. */
  count: number;
  /**
   * The distinct values of a stored field over the selected rows, with how many rows hold each,
   * in order of first occurrence (as tallyField gives them); rows without the field left out.
   */
  tally(name: string): { keys: readonly string[]; counts: readonly number[] } | null;
  /** The integers of a field over every row of the block (only when no filter selects): how many rows hold one, min, max and the sum (NaN when not exact). */
  ints(name: string): { n: number; min: number; max: number; sum: number } | null;
  /** Events per minute from `first` (ms), every row of the block (only when no filter selects). */
  minutes(): { first: number; counts: readonly number[] } | null;
}

/** Ways an aggregate takes a block's events without an Ev per event (columnar.ts). */
export interface ColumnAggregator<State> {
  /** Adds `n` events whose contents it never reads (count()). */
  addCount?(st: State, n: number): void;
  /**
   * Adds `n` events known only to lie in [minTs, maxTs] (block metadata); false, adding nothing,
   * when that does not decide where they go.
   */
  addSpan?(st: State, minTs: number, maxTs: number, n: number): boolean;
  /** Adds the selected rows of a block. */
  addRows?(st: State, rows: ColumnRows): void;
  /** Adds the selected rows of a block from its column summaries; false, adding nothing, when they do not decide. */
  addSummary?(st: State, rows: SummaryRows): boolean;
  /**
   * Adds what addRows held back (columnar.ts HeldTally: a tally kept across blocks). The scan
   * calls it once a task's blocks are added, before the state leaves the task; addSummary and
   * merge flush first themselves.
   */
  flush?(st: State): void;
}

/**
 * An aggregate. `State` must survive structured cloning (plain objects, arrays, Maps, numbers,
 * strings): partial states are built on worker threads and merged on the coordinator, which
 * compiles the same query and so holds the same aggregator. `merge` must be associative and
 * commutative over partial states; `finish` turns the merged state into result rows.
 */
export interface Aggregator<State = unknown> {
  name: string;
  init(): State;
  add(state: State, e: Ev): void;
  merge(into: State, other: State): void;
  finish(state: State): Ev[];
  /** Bounds the state hit (groups left out, rows cut), as messages for the result's warnings. */
  warnings?(state: State): string[];
  /** Column fast paths, each giving exactly what `add` would per event. */
  columns?: ColumnAggregator<State>;
}

export interface AggStage {
  kind: 'agg';
  name: string;
  agg: Aggregator;
}

export type Stage = MapStage | AggStage;

/** What the executor may skip without changing the answer (derived from the leading filters). */
export interface Pruning {
  /**
   * False when no event of a datasource with these tags (names without `#`) can pass the leading
   * filters. Null: no tag condition.
   */
  tags: ((tags: Readonly<Record<string, string>>) => boolean) | null;
  /**
   * Alternatives of what a block must hold to contain a match: a block can hold one only if, for
   * some alternative, its filters may contain everything the alternative needs. Null: the block
   * filters cannot decide.
   */
  bloom: BlockNeeds[] | null;
}

/** One alternative of Pruning.bloom: a conjunction. */
export interface BlockNeeds {
  /** Whole tokens for the token bloom (lower-case token runs or whole lower-cased field values, src/segments/bloom.ts). */
  tokens: string[];
  /**
   * Folded token runs of free text and field wildcards, each at least a gram long, whose every gram
   * the gram filter must hold (src/segments/grams.ts): only blocks of segment format 4 and later,
   * whose gram filter holds every field value's grams besides @rawstring's.
   */
  words: string[];
}

export interface CompiledQuery {
  /** The query text as run (`*` for an empty query). */
  text: string;
  stages: Stage[];
  /** True when the pipeline has an explicit aggregate; otherwise the compiler appended `tail(200)`. */
  isAggregate: boolean;
  pruning: Pruning;
  /** The product's `extraData` for this query (timechart keys), string values; empty when none. */
  extraData: Record<string, string>;
  /** Output column order when the aggregate defines one (groupBy keys then values, table fields). */
  fieldOrder: string[] | null;
  /** Problems known when compiling (a bucket span enlarged to stay within the bucket limit). */
  warnings?: string[];
  /** A filter query that ends in the stream collector (stream.ts): its partial states go to the run's sink. */
  streamed?: true;
}

/** Bounds a query runs under (config `query.*`). */
export interface QueryLimits {
  /** Distinct groups one groupBy/top/timechart may hold. */
  maxGroups: number;
  /** Rows an aggregate or a tail/head/sort may return. */
  maxRows: number;
}

export const DEFAULT_LIMITS: QueryLimits = { maxGroups: 1_000_000, maxRows: 200_000 };
