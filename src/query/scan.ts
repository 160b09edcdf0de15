/**
 * The worker side of a query: one task scans a batch of units (blocks of a segment file, or blocks
 * the digest still holds in memory), runs the pipeline's per-event stages up to its first
 * aggregate, and returns that aggregate's partial state. Blocks outside the time range or whose
 * bloom filter rules the search out are skipped without decompressing them.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { LogsvcError } from '../lib/errors.js';
import { decodeGroupEvents } from '../events/index.js';
import type { BlockPart } from '../digest/block-parts.js';
import { appendEvent, blockIntact, blockLength, bodyOffset, emptyColumns, encodedBlockAt, readBlockMeta } from '../segments/block.js';
import { FrameDamage, framedColumns } from '../segments/frames.js';
import { bloomMayContain } from '../segments/bloom.js';
import { gramFilterMayContain, gramProbes } from '../segments/grams.js';
import { lz4Codec } from '../segments/codec.js';
import type { Position } from '../segments/catalog.js';
import type { BlockEntry } from '../segments/segment-file.js';
import { BlockView, ColumnEvent, type BlockOrigin } from './block-view.js';
import { BlockHeads } from './block-heads.js';
import { FilterPacks, MAY_MATCH, RULED_OUT, UNDECIDED, packedProbes } from './filter-packs.js';
import { KeptFrames } from './kept-frames.js';
import { packedRun, packedSegUnit, REF_ELEMENTS, REF_UNCOMPRESSED, shareRefs, unpackRef, unpackRefs, type PackedTask } from './packed-refs.js';
import { KeptInts } from './kept-ints.js';
import { SeenBytesCache } from './seen-bytes.js';
import { TemplateHeads } from './template-heads.js';
import { tableKey } from '../files/packed.js';
import { compileQuery } from './compile.js';
import { Meter, withMeter, type MemoryBudget } from './memory.js';
import { chainStages } from './pipeline.js';
import { addFromMetadata, columnPlan, columnRows, metadataAnswers, selectRows, summaryRows, type SortedInts, type SummarisedColumn } from './columnar.js';
import type { Aggregator, BlockNeeds, CompiledQuery, Ev, MapStage, QueryContext, QueryLimits, SummaryRows } from './runtime.js';
import type { PackedTable } from '../files/packed.js';

/** A block of a segment file, as the catalog describes it. */
export interface BlockRef {
  pos: number;
  headerLength: number;
  bloomLength: number;
  gramLength: number;
  /** The gram filter holds field values' grams (BlockMeta.fieldGrams). */
  fieldGrams?: boolean;
  /** Format 5: columns in their own frames, read one by one (BlockMeta.framed). */
  framed?: boolean;
  compressedLength: number;
  uncompressedLength: number;
  eventCount: number;
  minTs: number;
  maxTs: number;
  /** A live query's boundary falls in this block: its events at queue offsets from here on are left out. */
  below?: number;
}

export type ScanUnit =
  | { kind: 'seg'; path: string; partition: number; tags: Record<string, string>; blocks: readonly BlockRef[] }
  | {
      kind: 'mem';
      partition: number;
      tags: Record<string, string>;
      parts: BlockPart[];
      /** Events at or below this position are already in segments (and scanned there). */
      hw: Position | null;
    };

export interface QuerySpec {
  text: string;
  args: Record<string, string>;
  ctx: QueryContext;
  limits: QueryLimits;
  /**
   * Lookup tables the query names, by that name (match(), lookup()): resolved and loaded on the
   * coordinator; their SharedArrayBuffers reach the workers without copying.
   */
  files?: Record<string, PackedTable>;
  /** Stream every event of a filter query instead of ending it in tail(200) (stream.ts). */
  stream?: boolean;
  /**
   * A live query's historical part (docs/cluster.md, "Live queries"): per partition, the queue
   * offset its live part starts at; events there and after are left out (partitions past the list:
   * all of them).
   */
  below?: number[];
}

export interface ScanTask {
  spec: QuerySpec;
  repoName: string;
  /** A view connection's filter, run before the query's own stages ("" or absent: none). */
  prefix?: string;
  units: ScanUnit[];
  /** Epoch ms after which the query has used up its time (query.max_query_seconds). */
  deadline: number;
  /** The query's memory budget and the node's (memory.ts); none: not metered (tests). */
  memory?: MemoryBudget;
  /** Every event through the stages one by one, no column path (benchmarks compare the two). */
  perEvent?: boolean;
}

export interface ScanResult {
  state: unknown;
  /** Events read (in range, before the pipeline's filters). */
  events: number;
  /** Uncompressed bytes of the blocks read. */
  bytes: number;
  blocksRead: number;
  blocksSkipped: number;
  /** Blocks answered from their head's column summaries (format 6), none of their frames read. */
  blocksSummarised?: number;
  /** Events that reached the first aggregate. */
  matched: number;
  /** Problems that left data out (a damaged block). */
  warnings: string[];
}

/** A block of which at most 1 row in this many is kept is read row by row (BlockView.readFew). */
const FEW_ROWS = 8;

const compiled = new Map<string, CompiledQuery>();
/** This thread's parsed format 5 block heads, kept between tasks (block-heads.ts). */
export const blockHeads = new BlockHeads();
/** This thread's block filters packed per segment, checked many blocks in one native call (filter-packs.ts). */
export const filterPacks = new FilterPacks();
/** This thread's small frames, checked and decompressed, kept between tasks (kept-frames.ts). */
export const keptFrames = new KeptFrames();
/** Per query thread: integer columns kept decoded for numeric ranges (kept-ints.ts). */
export const keptInts = new KeptInts();

/** This thread's byte values of text columns, kept between tasks (seen-bytes.ts). */
export const seenBytes = new SeenBytesCache();
/** Per query thread: text searches' raw template heads (template-heads.ts). */
export const templateHeads = new TemplateHeads();


/** The cache key of a spec: its tables count by content hash and kind, not by their bytes. */
function specKey(spec: QuerySpec): string {
  const files = spec.files === undefined ? null : Object.entries(spec.files).map(([n, t]) => [n, tableKey(t)]);
  return JSON.stringify([spec.text, spec.args, spec.ctx, spec.limits, files, spec.stream === true]);
}

/** The compiled query for a spec; workers keep the last few (a job's tasks share one). */
export function compiledFor(spec: QuerySpec): CompiledQuery {
  const key = specKey(spec);
  let q = compiled.get(key);
  if (q === undefined) {
    q = compileQuery(spec.text, { args: spec.args, ctx: spec.ctx, limits: spec.limits, ...(spec.files === undefined ? {} : { files: spec.files }), stream: spec.stream === true });
    if (compiled.size >= 16) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, q);
  }
  return q;
}

/** The stages before the first aggregate, and that aggregate. */
export function splitAtAggregate(q: CompiledQuery): { maps: MapStage[]; agg: Aggregator; rest: number } {
  const maps: MapStage[] = [];
  for (let i = 0; i < q.stages.length; i++) {
    const s = q.stages[i]!;
    if (s.kind === 'agg') return { maps, agg: s.agg, rest: i + 1 };
    maps.push(s);
  }
  throw new LogsvcError('E_INTERNAL', 'a compiled query has no aggregate');
}

/** Block needs with the gram probes of their words computed once per task. */
export interface BlockProbe {
  tokens: string[];
  grams: Uint32Array[];
}

export function blockProbes(alternatives: readonly BlockNeeds[]): BlockProbe[] {
  return alternatives.map((a) => ({ tokens: a.tokens, grams: a.words.map(gramProbes) }));
}

/**
 * False when no alternative can be in a block with these filters (`grams` empty for a format 1
 * block). `fieldGrams`: the gram filter holds field values' grams too (format 4 on); else gram
 * words cannot rule the block out (a field value may hold them).
 */
export function blockMayMatch(bloom: Buffer, grams: Buffer, alternatives: readonly BlockProbe[], fieldGrams: boolean): boolean {
  return alternatives.some((a) => a.tokens.every((tok) => bloomMayContain(bloom, tok)) && (!fieldGrams || a.grams.every((p) => gramFilterMayContain(grams, p))));
}

function memoryView(u: Extract<ScanUnit, { kind: 'mem' }>, origin: BlockOrigin): BlockView {
  const c = emptyColumns();
  for (const p of u.parts) {
    const events = decodeGroupEvents(p.events);
    for (let i = p.skip; i < events.length; i++) {
      const index = p.base + i;
      if (u.hw !== null && (p.offset < u.hw.offset || (p.offset === u.hw.offset && index <= u.hw.index))) continue;
      const e = events[i]!;
      appendEvent(c, e.timestamp, e.timezone, e.rawstring, e.fields, p.at, p.offset, index);
    }
  }
  return BlockView.fromColumns(c, origin);
}

/** The filter stages of a view connection's filter (compiled and cached like a query). */
export function prefixStages(spec: QuerySpec, prefix: string | undefined): MapStage[] {
  if (prefix === undefined || prefix === '' || prefix === '*') return [];
  return splitAtAggregate(compiledFor({ text: prefix, args: {}, ctx: spec.ctx, limits: spec.limits })).maps;
}

/**
 * How one task's blocks reach the aggregate state in `result`: `meta` answers a block from its
 * header when the query allows (true: done, nothing to read), `view` scans a block's rows. With
 * `columnPath` the column path of columnar.ts is taken where it applies; without it, every event
 * goes through the stages as a ColumnEvent (the general path the column path is checked against).
 */
export function blockScanner(
  maps: readonly MapStage[],
  agg: Aggregator,
  result: ScanResult,
  opts: { start: number; end: number; columnPath: boolean; meter: Meter; overTime: () => void },
): {
  headers: boolean;
  /** The column summaries of a block's head (format 6) may decide its filters: ask them before its bloom filter. */
  summariesFirst: boolean;
  /** The aggregate takes a count alone (count()): a range may count a block in its kept values in order (kept-ints.ts). */
  countsAlone: boolean;
  columnsOnly: boolean;
  meta(minTs: number, maxTs: number, n: number): boolean;
  /** `held`: the block's integer columns this thread keeps decoded, in order (kept-ints.ts), which may count a range the summaries cannot. */
  summary(columns: readonly SummarisedColumn[], n: number, whollyInRange: boolean, held?: SortedInts): boolean;
  /**
   * When the summaries decide the filters but could not answer the block: 'none' when no row of the
   * block passes them (leave it out), 'rows' when some do and nothing after them filters (its bloom
   * filter cannot rule it out: read it); null when they do not decide, or a later filter may.
   */
  summaryVerdict(columns: readonly SummarisedColumn[], n: number, held?: SortedInts): 'none' | 'rows' | null;
  view(view: BlockView, whollyInRange: boolean): void;
  /** The aggregate's state complete: what its column path held back added (ColumnAggregator.flush). */
  flush(): void;
} {
  const { start, end, meter, overTime } = opts;
  const state = result.state;
  const toAgg = (e: Ev): void => {
    result.matched++;
    agg.add(state, e);
  };
  const feed = chainStages(maps, toAgg);
  const plan = opts.columnPath ? columnPlan(maps, agg) : null;
  const restFeed = plan === null ? feed : chainStages(plan.rest, toAgg);
  const fromMeta = plan !== null && metadataAnswers(plan);
  // Kept integer columns in order count a block's rows without knowing which they are: only an
  // aggregate that takes a count alone (count()) is answered so; another reads the block's rows.
  const countsAlone = plan?.agg?.addCount !== undefined;
  // A block's summary rows, made once for summary() and summaryVerdict() (asked one after the other).
  let lastColumns: readonly SummarisedColumn[] | null = null;
  let lastHeld: SortedInts | undefined;
  let lastRows: SummaryRows | null = null;
  const rowsOf = (columns: readonly SummarisedColumn[], n: number, held: SortedInts | undefined): SummaryRows | null => {
    if (columns !== lastColumns || held !== lastHeld) {
      lastRows = summaryRows(plan!, columns, n, held);
      lastColumns = columns;
      lastHeld = held;
    }
    return lastRows;
  };
  return {
    headers: fromMeta,
    summariesFirst: plan !== null && plan.summaryFilters !== null,
    countsAlone,
    // Rows reach the aggregate as columns: a block's columns are read as they are asked for
    // (unless a filter reads them all: then one read of the block's frames).
    columnsOnly: plan !== null && plan.rest.length === 0 && plan.agg?.addRows !== undefined && !plan.wide,
    meta(minTs, maxTs, n) {
      if (!fromMeta || minTs < start || maxTs > end || !addFromMetadata(plan!, state, minTs, maxTs, n)) return false;
      result.events += n;
      result.matched += n;
      return true;
    },
    summary(columns, n, whollyInRange, held) {
      const add = plan?.agg?.addSummary;
      if (!whollyInRange || plan === null || plan.rest.length > 0 || add === undefined) return false;
      const rows = rowsOf(columns, n, countsAlone ? held : undefined);
      if (rows === null || (rows.count > 0 && !add(state, rows))) return false;
      result.events += n;
      result.matched += rows.count;
      return true;
    },
    summaryVerdict(columns, n, held) {
      if (plan === null || plan.summaryFilters === null || plan.filters.length === 0) return null;
      const rows = rowsOf(columns, n, countsAlone ? held : undefined);
      if (rows === null) return null;
      return rows.count === 0 ? 'none' : plan.rest.length === 0 ? 'rows' : null;
    },
    view(view, whollyInRange) {
      if (plan !== null) {
        const { sel, inRange, count } = selectRows(plan, view, whollyInRange, start, end);
        result.events += inRange;
        if (plan.agg?.addRows !== undefined) {
          result.matched += count;
          plan.agg.addRows(state, columnRows(view, sel, count));
          return;
        }
        // A selective filter: the few rows kept are read row by row, not their whole columns.
        if (count * FEW_ROWS <= view.n) view.readFew();
        for (let j = 0; j < count; j++) {
          restFeed(new ColumnEvent(view, sel[j]!));
          meter.eventDone();
          if ((j & 1023) === 1023) overTime();
        }
        return;
      }
      const ts = view.ts();
      for (let i = 0; i < view.n; i++) {
        if (!whollyInRange) {
          const t = ts[i]!;
          if (t < start || t > end) continue;
        }
        result.events++;
        feed(new ColumnEvent(view, i));
        meter.eventDone();
        if ((i & 1023) === 1023) overTime();
      }
    },
    flush() {
      plan?.agg?.flush?.(state);
    },
  };
}

/**
 * True when the query's blocks may be answered from their heads' column summaries (format 6,
 * columnar.ts summaryRows): its filters are comparisons the summaries decide and its aggregate
 * takes summaries, with no stage between. Whether a block's summaries do is known once its head is read.
 */
export function answersFromSummaries(q: CompiledQuery): boolean {
  const { maps, agg } = splitAtAggregate(q);
  const plan = columnPlan(maps, agg);
  return plan.rest.length === 0 && plan.summaryFilters !== null && plan.agg?.addSummary !== undefined;
}

/** A segment's blocks as scan refs, with their time span and uncompressed bytes (segmentRefs). */
export interface SegmentRefs {
  readonly refs: readonly BlockRef[];
  readonly minTs: number;
  readonly maxTs: number;
  readonly bytes: number;
  /** Events in the blocks. */
  readonly events: number;
}

const segmentRefsOf = new WeakMap<readonly BlockEntry[], SegmentRefs>();
/** The same, by the ref list handed out (a query's unit holding it whole is answered from headers as one span). */
const refsSpan = new WeakMap<readonly BlockRef[], SegmentRefs>();

function blockRef(b: BlockEntry): BlockRef {
  return { pos: b.pos, headerLength: b.headerLength, bloomLength: b.bloomLength, gramLength: b.gramLength, fieldGrams: b.fieldGrams === true, ...(b.framed === true ? { framed: true } : {}), compressedLength: b.compressedLength, uncompressedLength: b.uncompressedLength, eventCount: b.eventCount, minTs: b.minTs, maxTs: b.maxTs };
}

/**
 * The scan refs of a segment's block list, made once and shared by every query's snapshot (a
 * query's units hold them as they are; nothing changes a ref or a ref list once made), so a
 * query over whole segments copies no block (docs/benchmarks.md, 2026-11-29: the per-query cost).
 * Block lists only grow (an open segment's) or are replaced (a trim): a longer list gets a new
 * ref list, the one handed out before stays as it was.
 */
export function segmentRefs(blocks: readonly BlockEntry[]): SegmentRefs {
  const had = segmentRefsOf.get(blocks);
  if (had !== undefined && had.refs.length === blocks.length) return had;
  const refs = had === undefined ? [] : had.refs.slice();
  let { minTs, maxTs, bytes, events } = had ?? { minTs: Infinity, maxTs: -Infinity, bytes: 0, events: 0 };
  for (let i = refs.length; i < blocks.length; i++) {
    const b = blocks[i]!;
    refs.push(blockRef(b));
    minTs = Math.min(minTs, b.minTs);
    maxTs = Math.max(maxTs, b.maxTs);
    bytes += b.uncompressedLength;
    events += b.eventCount;
  }
  const made = { refs, minTs, maxTs, bytes, events };
  shareRefs(refs);
  segmentRefsOf.set(blocks, made);
  refsSpan.set(refs, made);
  return made;
}

/**
 * Splits off the segment blocks wholly inside the range that the query answers from their headers
 * (count(), a time histogram of counts where a block lies in one bucket): their partial state,
 * computed here without reading them, and the units left to scan. Null state: none.
 */
export function answerFromHeaders(q: CompiledQuery, ctx: Pick<QueryContext, 'start' | 'end'>, units: readonly ScanUnit[]): { result: ScanResult | null; units: ScanUnit[] } {
  const { maps, agg } = splitAtAggregate(q);
  const result: ScanResult = { state: agg.init(), events: 0, bytes: 0, blocksRead: 0, blocksSkipped: 0, matched: 0, warnings: [] };
  const scanner = blockScanner(maps, agg, result, { start: ctx.start, end: ctx.end, columnPath: true, meter: new Meter(null), overTime: () => undefined });
  if (!scanner.headers) return { result: null, units: [...units] };
  const left: ScanUnit[] = [];
  for (const u of units) {
    if (u.kind !== 'seg') {
      left.push(u);
      continue;
    }
    // A segment's shared ref list (no live boundary in it) whose span the headers decide as a
    // whole: its blocks' counts added at once (what each block's would add, summed: each block's
    // span lies in the whole's, finite when the whole's is).
    const whole = refsSpan.get(u.blocks);
    if (whole !== undefined && Number.isFinite(whole.minTs) && Number.isFinite(whole.maxTs) && scanner.meta(whole.minTs, whole.maxTs, whole.events)) continue;
    const blocks = u.blocks.filter((b) => b.below !== undefined || !scanner.meta(b.minTs, b.maxTs, b.eventCount));
    if (blocks.length === u.blocks.length) left.push(u);
    else if (blocks.length > 0) left.push({ ...u, blocks });
  }
  return { result: result.events > 0 ? result : null, units: left };
}

/** `f` with a file opener of `path` (opened on first use, closed after). */
function withFile<T>(path: string, f: (file: () => number) => T): T {
  let fd = -1;
  try {
    return f(() => (fd >= 0 ? fd : (fd = openSync(path, 'r'))));
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}

/** A query's block needs as a first-round task checks them (null: it has none). */
function firstRoundProbes(spec: QuerySpec): { probes: BlockProbe[]; packed: Uint32Array | null } | null {
  const q = compiledFor(spec);
  if (q.pruning.bloom === null) return null;
  const probes = blockProbes(q.pruning.bloom);
  return { probes, packed: packedProbes(probes) };
}

/**
 * The indexes of a unit's `n` blocks that the filters let through: the packs' `verdicts` (null:
 * none), and what they leave undecided checked block by block from the cached head (`blockAt`
 * makes the block's ref; only those blocks are made).
 */
function keptOf(path: string, n: number, verdicts: Uint8Array | null, blockAt: (i: number) => BlockRef, file: () => number, probes: readonly BlockProbe[]): number[] {
  const keep: number[] = [];
  for (let i = 0; i < n; i++) {
    const v = verdicts === null ? UNDECIDED : verdicts[i]!;
    if (v === RULED_OUT) continue;
    if (v === MAY_MATCH) {
      keep.push(i);
      continue;
    }
    const b = blockAt(i);
    const head = b.framed === true ? blockHeads.get(file, path, b, true) : null;
    if (head === null || blockMayMatch(head.bloom!, head.grams!, probes, b.fieldGrams === true)) keep.push(i);
  }
  return keep;
}

/**
 * Per unit of `task`, the indexes of its blocks that the query's bloom and gram filters let
 * through, checked from the thread's cached heads as a scan checks them (null: all of them, a unit
 * in memory or a query without such filters). Blocks of formats before 5 and damaged heads are
 * let through: the scan decides them.
 */
export function pruneTask(task: ScanTask): (number[] | null)[] {
  const needs = firstRoundProbes(task.spec);
  return task.units.map((u) => {
    if (u.kind === 'mem' || needs === null) return null;
    // All of the unit's blocks in one native call where the module is there; what it leaves undecided block by block.
    return withFile(u.path, (file) => keptOf(u.path, u.blocks.length, filterPacks.verdicts(blockHeads, file, u.path, u.blocks, needs.packed), (i) => u.blocks[i]!, file, needs.probes));
  });
}

/** Uncompressed bytes of a unit's blocks (what the executor cuts tasks by). */
export function unitBytes(u: ScanUnit): number {
  if (u.kind === 'mem') return u.parts.reduce((n, p) => n + p.events.byteLength, 0);
  return u.blocks.reduce((n, b) => n + b.uncompressedLength, 0);
}

/** A first-round task (pruneScanTask): its units, pruned, then scanned when what is left holds at most `scanBytes`. */
export interface PruneTask extends ScanTask {
  scanBytes: number;
}

/** What a first-round task gives back: its blocks scanned, or (too many let through) which blocks of its units the filters let through. */
export type PruneScan = { scanned: ScanResult } | { kept: (number[] | null)[] };

/**
 * The first round of a query the block filters may prune (executor.ts): the blocks of the task's
 * units that the bloom and gram filters let through (pruneTask), then, when those hold no more
 * than one task's bytes (a rare token's few blocks), scanned by this same task: no second round
 * of posts and wake-ups (docs/benchmarks.md, 2026-11-29). Else the kept blocks go back to be cut
 * into tasks of the usual size, so no task scans more than one ordinarily would.
 */
export function pruneScanTask(task: PruneTask): PruneScan {
  const kept = pruneTask(task);
  let bytes = 0;
  let left = 0;
  task.units.forEach((u, i) => {
    const keep = kept[i];
    if (keep === null || keep === undefined || u.kind !== 'seg') bytes += unitBytes(u);
    else {
      left += u.blocks.length - keep.length;
      for (const j of keep) bytes += u.blocks[j]!.uncompressedLength;
    }
  });
  if (bytes > task.scanBytes) return { kept };
  const units: ScanUnit[] = [];
  task.units.forEach((u, i) => {
    const keep = kept[i];
    if (keep === null || keep === undefined || u.kind !== 'seg') units.push(u);
    else if (keep.length === u.blocks.length) units.push(u);
    else if (keep.length > 0) units.push({ ...u, blocks: keep.map((j) => u.blocks[j]!) });
  });
  return scanLetThrough(task, units, left);
}

/**
 * pruneScanTask over a task as it crossed to the thread (packed-refs.ts: its blocks packed, not
 * objects): the packed refs matched against the packs in the native call (filter-packs.ts
 * verdictsPacked), and a ref object made only for a block let through (or left undecided). The
 * same answer as pruneScanTask over the task unpacked (test/unit/query/filter-packs.test.ts).
 */
export function pruneScanPacked(task: PackedTask<PruneTask>): PruneScan {
  const { refs, segs } = task;
  const needs = firstRoundProbes(task.spec);
  const blockAt = (at: number) => (i: number): BlockRef => unpackRef(refs, at + i);
  const kept = task.units.map((u) => {
    if (typeof u !== 'number' || needs === null) return null;
    const path = segs.paths[u]!;
    const { at, count } = packedRun(segs, u);
    return withFile(path, (file) => keptOf(path, count, filterPacks.verdictsPacked(blockHeads, file, path, refs, at, count, needs.packed), blockAt(at), file, needs.probes));
  });
  const bytesOf = (at: number, i: number): number => refs[(at + i) * REF_ELEMENTS + REF_UNCOMPRESSED]!;
  let bytes = 0;
  let left = 0;
  task.units.forEach((u, k) => {
    if (typeof u !== 'number') {
      bytes += unitBytes(u);
      return;
    }
    const keep = kept[k];
    const { at, count } = packedRun(segs, u);
    if (keep === null || keep === undefined) for (let i = 0; i < count; i++) bytes += bytesOf(at, i);
    else {
      left += count - keep.length;
      for (const i of keep) bytes += bytesOf(at, i);
    }
  });
  if (bytes > task.scanBytes) return { kept };
  const units: ScanUnit[] = [];
  task.units.forEach((u, k) => {
    if (typeof u !== 'number') {
      units.push(u);
      return;
    }
    const keep = kept[k];
    const { at, count } = packedRun(segs, u);
    const blocks = keep === null || keep === undefined ? unpackRefs(refs, at, count) : keep.map(blockAt(at));
    if (blocks.length > 0) units.push(packedSegUnit(segs, u, blocks));
  });
  return scanLetThrough(task, units, left);
}

/** The first round's scan of the `units` its filters let through (`left`: blocks they ruled out). */
function scanLetThrough(task: Omit<PruneTask, 'units'> & Partial<Pick<PackedTask<PruneTask>, 'refs' | 'segs'>>, units: ScanUnit[], left: number): PruneScan {
  const { scanBytes: _, refs: _r, segs: _s, ...scan } = task;
  const scanned = runScanTask({ ...scan, units });
  scanned.blocksSkipped += left;
  return { scanned };
}

export function runScanTask(task: ScanTask): ScanResult {
  // What the task makes is charged to the query while it runs; its partial state is handed over
  // (and charged by the coordinator's merge) when it returns.
  const meter = new Meter(task.memory ?? null);
  try {
    return withMeter(meter, () => scanTask(task, meter));
  } finally {
    meter.releaseAll();
  }
}

function scanTask(task: ScanTask, meter: Meter): ScanResult {
  const q = compiledFor(task.spec);
  const split = splitAtAggregate(q);
  const { agg } = split;
  const maps = [...prefixStages(task.spec, task.prefix), ...split.maps];
  const state = agg.init();
  const { start, end } = task.spec.ctx;
  const result: ScanResult = { state, events: 0, bytes: 0, blocksRead: 0, blocksSkipped: 0, matched: 0, warnings: [] };
  const overTime = (): void => {
    if (Date.now() > task.deadline) throw new LogsvcError('E_QUERY_LIMIT', 'the query ran out of time (query.max_query_seconds); narrow the time range or the search');
  };
  const scanner = blockScanner(maps, agg, result, { start, end, columnPath: task.perEvent !== true, meter, overTime });
  const scanView = scanner.view;

  const probes = q.pruning.bloom === null ? null : blockProbes(q.pruning.bloom);
  const damaged = (path: string, pos: number): string => `segment ${path}: the block at ${pos} is damaged and was left out (run logsvc segments verify)`;
  /**
   * A format 5 block: its header and column directory (with the filters when they can rule it
   * out) from the thread's cache of block heads, or in one read checked by their own checksum;
   * then, when rows reach the aggregate as columns, each column the query asks for is read from
   * the file on first use (one read of its frame, checked by its checksum); otherwise all frames
   * in one read. A damaged frame leaves the block out with a warning.
   */
  // The integer columns this thread keeps decoded for the block being scanned, in order (one
  // function for the task: the block is where it looks).
  let heldPath = '';
  let heldPos = 0;
  let heldStored = 0;
  const held: SortedInts = (name) => keptInts.sorted(heldPath, heldPos, heldStored, name);
  // The bloom and gram filters of a unit's blocks checked in one native call (filter-packs.ts),
  // where no column summary is asked first (a block they answer reads no filter).
  const packed = probes === null || scanner.summariesFirst ? null : packedProbes(probes);
  /** `filtered`: the unit's packed filters' verdict (filter-packs.ts), UNDECIDED where they did not check the block. */
  const scanFramed = (file: () => number, path: string, b: BlockRef, origin: BlockOrigin, filtered: number): void => {
    if (filtered === RULED_OUT) {
      result.blocksSkipped++;
      return;
    }
    // Format 6: answered from the head's column summaries, no frame read (not a block a live
    // query's boundary cuts: its summaries count rows past the boundary). Asked before the bloom
    // and gram filters, which are then read only when the summaries do not decide: they are exact
    // where the bloom filter only may rule a block out, and a JSON block's filters are several
    // times its head (reading them made a field filter over 1 M JSON events 13x slower).
    const summarised = scanner.summariesFirst && b.below === undefined;
    let bloom = probes !== null && filtered !== MAY_MATCH;
    let head = blockHeads.get(file, path, b, bloom && !summarised);
    if (head === null) {
      result.warnings.push(damaged(path, b.pos));
      return;
    }
    if (summarised) {
      heldPath = path;
      heldPos = b.pos;
      heldStored = head.meta.compressedLength;
      if (scanner.summary(head.dir.columns, head.meta.eventCount, b.minTs >= start && b.maxTs <= end, held)) {
        result.blocksSummarised = (result.blocksSummarised ?? 0) + 1;
        return;
      }
      const verdict = scanner.summaryVerdict(head.dir.columns, head.meta.eventCount, held);
      if (verdict === 'none') {
        result.blocksSkipped++;
        return;
      }
      if (verdict === 'rows') bloom = false;
    }
    if (bloom && probes !== null) {
      if (head.filters === null) head = blockHeads.get(file, path, b, true);
      if (head === null) {
        result.warnings.push(damaged(path, b.pos));
        return;
      }
      if (!blockMayMatch(head.bloom!, head.grams!, probes, b.fieldGrams === true)) {
        result.blocksSkipped++;
        return;
      }
    }
    const { meta, dir } = head;
    const framesAt = b.pos + bodyOffset(b);
    let read: (at: number, length: number) => Buffer;
    const single = scanner.columnsOnly;
    if (single) {
      read = (at, length) => {
        const frame = Buffer.allocUnsafe(length);
        const n = readSync(file(), frame, 0, length, framesAt + at);
        return n === length ? frame : frame.subarray(0, n);
      };
    } else {
      const frames = Buffer.allocUnsafe(meta.compressedLength);
      const n = readSync(file(), frames, 0, frames.length, framesAt);
      read = (at, length) => frames.subarray(at, Math.min(n, at + length));
    }
    result.blocksRead++;
    result.bytes += b.uncompressedLength;
    const where = `segment ${path}: block at ${b.pos}`;
    try {
      // Small frames kept (kept-frames.ts): also by a text search, which reads the block's frames
      // in one read but decompresses only the ones it needs (dictionaries, small text columns).
      const kept = keptFrames.block(path, b.pos, meta.compressedLength, single);
      const view = BlockView.fromEncoded(framedColumns(meta.eventCount, dir, (at, length) => read(at, length), lz4Codec, where, kept), origin);
      // Text search (the block read whole): its text columns' bytes, seen by earlier searches.
      if (!single) {
        view.seen = seenBytes.block(path, b.pos, meta.compressedLength);
        view.templateHead = templateHeads.block(path, b.pos, meta.compressedLength);
      } else view.keptInts = keptInts.block(path, b.pos, meta.compressedLength, summarised && scanner.countsAlone);
      scanView(b.below === undefined ? view : view.below(b.below), b.minTs >= start && b.maxTs <= end);
    } catch (err) {
      if (!(err instanceof FrameDamage)) throw err;
      result.warnings.push(`${damaged(path, b.pos)}: ${err.message}`);
    } finally {
      // Column aggregates keep no rows; should one outlive its block, it must not read a file closed by then.
      if (single) {
        read = () => {
          throw new LogsvcError('E_INTERNAL', `${where}: a column was asked for after its block was scanned`);
        };
      }
    }
  };
  for (const u of task.units) {
    overTime();
    const origin: BlockOrigin = { repoName: task.repoName, partition: u.partition, tags: u.tags };
    if (u.kind === 'mem') {
      const view = memoryView(u, origin);
      result.blocksRead++;
      for (const p of u.parts) result.bytes += p.events.byteLength;
      scanView(view, false);
      continue;
    }
    // Opened on the first read: blocks answered from their headers or from cached heads read nothing.
    let fd = -1;
    const file = (): number => (fd >= 0 ? fd : (fd = openSync(u.path, 'r')));
    try {
      const verdicts = filterPacks.verdicts(blockHeads, file, u.path, u.blocks, packed);
      for (let i = 0; i < u.blocks.length; i++) {
        const b = u.blocks[i]!;
        overTime();
        // Answered by what the block's header says, without reading it.
        if (b.below === undefined && scanner.meta(b.minTs, b.maxTs, b.eventCount)) continue;
        if (b.framed === true) {
          scanFramed(file, u.path, b, origin, verdicts === null ? UNDECIDED : verdicts[i]!);
          continue;
        }
        if (probes !== null) {
          // Both filters in one read, before (and usually instead of) the block.
          const filters = Buffer.allocUnsafe(b.bloomLength + b.gramLength);
          readSync(file(), filters, 0, filters.length, b.pos + b.headerLength);
          if (!blockMayMatch(filters.subarray(0, b.bloomLength), filters.subarray(b.bloomLength), probes, b.fieldGrams === true)) {
            result.blocksSkipped++;
            continue;
          }
        }
        // The whole block, so its checksum is verified before anything in it is served.
        const length = blockLength(b);
        const whole = Buffer.allocUnsafe(length);
        const got = readSync(file(), whole, 0, length, b.pos);
        const meta = got === length ? readBlockMeta(whole, 0) : null;
        if (meta === null || !blockIntact(whole, 0, meta)) {
          result.warnings.push(damaged(u.path, b.pos));
          continue;
        }
        // Any format by what the block says it is (a catalog entry without `framed` read whole).
        const view = BlockView.fromEncoded(encodedBlockAt(whole, 0, meta, lz4Codec), origin);
        result.blocksRead++;
        result.bytes += b.uncompressedLength;
        scanView(b.below === undefined ? view : view.below(b.below), b.minTs >= start && b.maxTs <= end);
      }
    } finally {
      if (fd >= 0) closeSync(fd);
    }
  }
  scanner.flush();
  return result;
}
