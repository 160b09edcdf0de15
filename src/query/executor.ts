/**
 * The coordinator of a query on this node. `start()` takes, synchronously, a snapshot of where the
 * repository's events are — segment blocks from the catalog and the blocks the digest still holds
 * in memory, the latter minus what the catalog's high-water marks say is already in segments — so
 * every event is seen exactly once. It prunes datasources by tags and blocks by time range, cuts
 * the rest into tasks for the worker pool (newest data first, at most `parallelism` tasks of one
 * query at a time, so other queries, ingest and digest keep their turn), merges the partial states
 * of the first aggregate as they arrive, and finally runs the remaining stages over the rows.
 */
import type { BlockPart } from '../digest/block-parts.js';
import { LogsvcError, isLogsvcError } from '../lib/errors.js';
import type { Position, SegmentInfo } from '../segments/catalog.js';
import type { BlockEntry } from '../segments/segment-file.js';
import { compileQuery, keptParsed } from './compile.js';
import { engineLimitError } from './limits.js';
import { approxBytes, Meter, withMeter, type MemoryBudget, type NodeQueryMemory } from './memory.js';
import { runRowsAsync } from './pipeline.js';
import type { CompiledQuery, Ev } from './runtime.js';
import { refsSlice } from './packed-refs.js';
import { answerFromHeaders, answersFromSummaries, segmentRefs, splitAtAggregate, unitBytes, type BlockRef, type PruneScan, type PruneTask, type QuerySpec, type ScanResult, type ScanTask, type ScanUnit } from './scan.js';
import type { Placement } from '../cluster/placement.js';

/** What a query searches: a repository, or a view's repositories (`sources`, each with its filter). */
export interface SearchTarget {
  id: string;
  name: string;
  sources?: readonly { id: string; name: string; filter: string }[];
}

interface TaskOf {
  units: ScanUnit[];
  repoName: string;
  prefix: string;
}

/** Runs scan tasks: the worker pool, or inline (tests). */
export interface ScanRunner {
  /** `short`: the query has no more tasks than its parallelism (served ahead of long ones). */
  scan(task: ScanTask, short?: boolean): Promise<ScanResult>;
  /**
   * A first-round task (scan.ts pruneScanTask; on a query thread pruneScanPacked, over its refs as they crossed): its blocks pruned by their filters, then scanned
   * when what is left holds at most `task.scanBytes`, else which blocks were let through; absent:
   * none pruned first.
   */
  prune?(task: PruneTask): Promise<PruneScan>;
}

/** Where a repository's events are (the segment catalog and the digest). */
export interface EventSources {
  /** A cluster query passes its placement: only the segments this node reads for it (placement.ts). */
  segments(repoId: string, placement?: Placement): readonly SegmentInfo[];
  /** A live query's placement names the digest epoch of each partition it reads memory of (placement.ts). */
  memory(repoId: string, placement?: Placement): { partition: number; ds: string; tags: Record<string, string>; parts: BlockPart[] }[];
  highWater(partition: number, ds: string): Position | null;
  /** Holds segment files for a snapshot (retention defers their unlink); returns the release. */
  pin?(paths: readonly string[]): () => void;
}

/**
 * The other nodes of a cluster, for one query: a partial result from each live node (what it holds
 * locally, scanned as this node scans its own, up to the first aggregate), and the nodes that hold
 * segments of the repository in the query's range but cannot be asked (the warning that results
 * are partial).
 */
export interface PeerScans {
  plan(spec: QuerySpec, repo: SearchTarget): { remotes: { node: number; scan: () => Promise<ScanResult> }[]; unreachable: number[]; placement?: Placement };
}

/** The product's warning when data of the query's range sits on nodes that cannot be asked. */
export const MISSING_SEGMENTS_WARNING = 'Segment files missing, partial results';

export interface ExecutorOptions {
  sources: EventSources;
  /** A cluster: the other nodes' partial results (set once the cluster is wired). */
  peers?: PeerScans;
  runner: ScanRunner;
  /** Tasks of one query on the pool at once. */
  parallelism: number;
  /** Uncompressed bytes of blocks per task. */
  taskBytes: number;
  /** Time one query may run (query.max_query_seconds). */
  maxQueryMs: number;
  /** Memory budgets per query and for all queries (memory.ts); none: not metered (tests). */
  memory?: NodeQueryMemory;
}

export interface QueryOutcome {
  rows: Ev[];
  /** Events that reached the first aggregate (for a filter query: every match, before tail()). */
  matched: number;
  warnings: string[];
}

/**
 * Takes the partial states of a streamed filter query (stream.ts) as they arrive, instead of the
 * coordinator merging them; the run waits for it (a slow client holds the scan back), at most until
 * the query's deadline (epoch ms): past it the sink throws E_QUERY_LIMIT.
 */
export type PartialSink = (state: unknown, deadline: number) => Promise<void>;

/** One running query: progress for polls, the outcome when done. */
export class QueryRun {
  readonly startedAt = Date.now();
  finishedAt: number | null = null;
  totalWork = 0;
  workDone = 0;
  processedEvents = 0;
  processedBytes = 0;
  outcome: QueryOutcome | null = null;
  error: LogsvcError | null = null;
  cancelled = false;
  /** The warnings known so far (a streamed answer sends those known when its headers go out). */
  readonly warnings = new Set<string>();
  readonly done: Promise<void>;

  constructor(
    readonly query: CompiledQuery,
    readonly spec: QuerySpec,
    body: (run: QueryRun) => Promise<QueryOutcome>,
    readonly sink?: PartialSink,
  ) {
    this.done = body(this).then(
      (o) => {
        this.outcome = o;
      },
      (err: unknown) => {
        this.error = isLogsvcError(err) ? err : (engineLimitError(err) ?? new LogsvcError('E_INTERNAL', `query failed: ${(err as Error).message}`));
      },
    ).finally(() => {
      this.finishedAt = Date.now();
    });
  }

  get finished(): boolean {
    return this.finishedAt !== null;
  }

  cancel(): void {
    this.cancelled = true;
  }
}

/** Splits units into tasks of about `taskBytes` (a segment's blocks may span several tasks). bench/scan uses it too. */
export function cutIntoTasks(units: readonly ScanUnit[], taskBytes: number): ScanUnit[][] {
  const tasks: ScanUnit[][] = [];
  let cur: ScanUnit[] = [];
  let bytes = 0;
  const flush = (): void => {
    if (cur.length > 0) tasks.push(cur);
    cur = [];
    bytes = 0;
  };
  for (const u of units) {
    if (u.kind === 'seg') {
      // A unit that fits whole is taken as it is (its block list shared, not copied block by block).
      const whole = unitBytes(u);
      if (u.blocks.length > 0 && bytes + whole < taskBytes) {
        cur.push(u);
        bytes += whole;
        continue;
      }
      // Runs of the unit's list (refsSlice: a run of a segment's shared list crosses to a query
      // thread as a copy of its kept packed form, packed-refs.ts).
      let from = 0;
      let b = 0;
      for (let i = 0; i < u.blocks.length; i++) {
        b += u.blocks[i]!.uncompressedLength;
        if (bytes + b >= taskBytes) {
          cur.push({ ...u, blocks: from === 0 && i === u.blocks.length - 1 ? u.blocks : refsSlice(u.blocks, from, i + 1) });
          flush();
          from = i + 1;
          b = 0;
        }
      }
      if (from < u.blocks.length) {
        cur.push({ ...u, blocks: from === 0 ? u.blocks : refsSlice(u.blocks, from, u.blocks.length) });
        bytes += b;
      }
    } else {
      cur.push(u);
      bytes += unitBytes(u);
      if (bytes >= taskBytes) flush();
    }
  }
  flush();
  return tasks;
}

/** Uncompressed bytes of the blocks of `segments` that overlap [start, end] (the scheduler's size of a query). */
export function bytesInRange(segments: Iterable<{ blocks: readonly BlockEntry[] }>, start: number, end: number): number {
  let bytes = 0;
  for (const seg of segments) {
    const r = segmentRefs(seg.blocks);
    if (r.minTs >= start && r.maxTs <= end) bytes += r.bytes;
    else for (const b of seg.blocks) if (b.maxTs >= start && b.minTs <= end) bytes += b.uncompressedLength;
  }
  return bytes;
}

export { segmentRefs };

/**
 * Per segment list (the catalog's for a repository, shared by every query until the catalog
 * changes): its indexes with the newest blocks first, ties in list order, as snapshot() orders its
 * units. A query whose units come in that order (every segment wholly in range and unchanged since)
 * sorts nothing: the sort of ~100 units with a comparator was 40 % of the snapshot of a count()
 * over 3 M access-log events (docs/benchmarks.md, 2026-11-29, range19b).
 */
const newestFirst = new WeakMap<readonly SegmentInfo[], Int32Array>();

function newestFirstOf(list: readonly SegmentInfo[]): Int32Array {
  let order = newestFirst.get(list);
  if (order === undefined || order.length !== list.length) {
    const newest = list.map((seg) => segmentRefs(seg.blocks).maxTs);
    order = Int32Array.from(list.keys()).sort((a, b) => newest[b]! - newest[a]! || a - b);
    newestFirst.set(list, order);
  }
  return order;
}

type SegUnit = Extract<ScanUnit, { kind: 'seg' }>;

/**
 * A segment's unit when a query reads all of its blocks, made once per shared ref list (scan.ts
 * segmentRefs) and shared by every snapshot, as the refs are: nothing changes a unit once made (a
 * first round's narrower unit is a new object). A snapshot made a unit object and a wrapper per
 * segment for every query, ~40 % of the bytes the HTTP thread allocated for a count() over ~100
 * segments (docs/benchmarks.md, 2026-11-29 "req21").
 */
const wholeUnits = new WeakMap<readonly BlockRef[], SegUnit>();

function wholeUnit(seg: SegmentInfo, refs: readonly BlockRef[]): SegUnit {
  const had = wholeUnits.get(refs);
  if (had !== undefined && had.path === seg.path && had.partition === seg.meta.partition && had.tags === seg.meta.tags) return had;
  const made: SegUnit = { kind: 'seg', path: seg.path, partition: seg.meta.partition, tags: seg.meta.tags, blocks: refs };
  wholeUnits.set(refs, made);
  return made;
}

/**
 * Blocks one first-round task checks (executor.firstRound): a cached head's filters take about a
 * microsecond each once the code is warm, so up to this many cost a thread a few milliseconds.
 */
export const FIRST_ROUND_BLOCKS = 2000;

export class QueryExecutor {
  constructor(private readonly opts: ExecutorOptions) {}

  /** Compiles `spec` (throws E_QUERY for a bad query) without running it. */
  compile(spec: QuerySpec): CompiledQuery {
    try {
      const parsed = keptParsed(spec);
      return compileQuery(spec.text, { args: spec.args, ctx: spec.ctx, limits: spec.limits, ...(spec.files === undefined ? {} : { files: spec.files }), ...(parsed === undefined ? {} : { parsed }), stream: spec.stream === true });
    } catch (err) {
      throw engineLimitError(err) ?? err;
    }
  }

  /**
   * Starts a query over repository `repoId`. The snapshot of sources is taken before this returns,
   * so a caller that subscribes to live records right after sees each later event exactly once.
   */
  start(spec: QuerySpec, repo: SearchTarget, sink?: PartialSink): QueryRun {
    const query = this.compile(spec);
    // A repository is one source; a view is one source per connection, each with its filter.
    const sources = repo.sources ?? [{ id: repo.id, name: repo.name, filter: '' }];
    // A cluster: every other live node's part of the same search, and which segments each reads.
    const peers = this.opts.peers?.plan(spec, repo) ?? { remotes: [], unreachable: [] };
    const perSource = sources.map((src) => ({ src, units: this.snapshot(query, spec, src.id, peers.placement) }));
    // Pinned in the same synchronous step as the snapshot: a segment deleted by retention meanwhile
    // stays on disk until this run is done with it.
    const release = this.pin(perSource);
    const { tasks, headers } = this.plan(query, spec, perSource);
    const run = new QueryRun(query, spec, (r) => this.execute(r, tasks, headers, peers), sink);
    void run.done.finally(release);
    return run;
  }

  private pin(perSource: readonly { units: readonly ScanUnit[] }[]): () => void {
    const pin = this.opts.sources.pin;
    if (pin === undefined) return (): void => undefined;
    const paths: string[] = [];
    for (const { units } of perSource) for (const u of units) if (u.kind === 'seg') paths.push(u.path);
    return pin(paths);
  }

  /** Sets the cluster's peers (wired after the executor exists). */
  setPeers(peers: PeerScans): void {
    this.opts.peers = peers;
  }

  /**
   * A cluster peer's part of a query: this node's own events of the target (local segments and the
   * partitions it digests; a view's repositories each with its filter), scanned up to the first
   * aggregate and merged into one partial result.
   */
  async scanLocal(spec: QuerySpec, repo: SearchTarget, placement?: Placement): Promise<ScanResult> {
    const query = this.compile(spec);
    const sources = repo.sources ?? [{ id: repo.id, name: repo.name, filter: '' }];
    const perSource = sources.map((src) => ({ src, units: this.snapshot(query, spec, src.id, placement) }));
    const release = this.pin(perSource);
    const { tasks, headers } = this.plan(query, spec, perSource);
    const { agg } = splitAtAggregate(query);
    const state = agg.init();
    const out: ScanResult = { state, events: 0, bytes: 0, blocksRead: 0, blocksSkipped: 0, matched: 0, warnings: [] };
    for (const h of headers) {
      agg.merge(state, h.state);
      out.events += h.events;
      out.matched += h.matched;
    }
    const deadline = Date.now() + this.opts.maxQueryMs;
    const memory = this.opts.memory?.budget();
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < tasks.length) {
        const { units, repoName, prefix } = tasks[next++]!;
        const r = await this.opts.runner.scan({ spec, repoName, units, deadline, ...(memory === undefined ? {} : { memory }), ...(prefix === '' ? {} : { prefix }) }, tasks.length <= this.opts.parallelism);
        agg.merge(state, r.state);
        out.events += r.events;
        out.bytes += r.bytes;
        out.blocksRead += r.blocksRead;
        out.blocksSkipped += r.blocksSkipped;
        out.matched += r.matched;
        out.warnings.push(...r.warnings);
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(this.opts.parallelism, Math.max(1, tasks.length)) }, worker));
    } finally {
      release();
    }
    return out;
  }

  /**
   * The tasks of a query, and the partial states of the blocks it answers from their headers alone
   * (columnar.ts: count(), one-bucket time histograms), which need no task (not behind a view's filter).
   */
  private plan(query: CompiledQuery, spec: QuerySpec, perSource: { src: { name: string; filter: string }; units: ScanUnit[] }[]): { tasks: TaskOf[]; headers: ScanResult[] } {
    const headers: ScanResult[] = [];
    const lefts = perSource.map(({ src, units }) => {
      let left = units;
      if (src.filter === '' || src.filter === '*') {
        const h = answerFromHeaders(query, spec.ctx, units);
        if (h.result !== null) headers.push(h.result);
        left = h.units;
      }
      return { src, left };
    });
    // A query the blocks' column summaries can answer (format 6: a few microseconds a block, no
    // frame read) in tasks of at least a thread's share of the bytes: one task per thread rather
    // than one per query.task_bytes, so fewer round trips to the pool (each a wake-up of a thread,
    // milliseconds on a loaded machine; docs/benchmarks.md, 2026-11-28).
    let taskBytes = this.opts.taskBytes;
    if (answersFromSummaries(query)) {
      const total = lefts.reduce((n, { left }) => n + left.reduce((m, u) => m + unitBytes(u), 0), 0);
      taskBytes = Math.max(taskBytes, Math.ceil(total / Math.max(1, this.opts.parallelism)));
    }
    const tasks = lefts.flatMap(({ src, left }) => cutIntoTasks(left, taskBytes).map((u) => ({ units: u, repoName: src.name, prefix: src.filter })));
    return { tasks, headers };
  }

  private snapshot(query: CompiledQuery, spec: QuerySpec, repoId: string, placement?: Placement): ScanUnit[] {
    const { start, end } = spec.ctx;
    const tagsOk = query.pruning.tags ?? null;
    // A live query's historical part stops at its live part's start, per partition (scan.ts QuerySpec.below).
    const below = spec.below;
    const out: ScanUnit[] = [];
    // The digest's memory before every segment.
    for (const m of this.opts.sources.memory(repoId, placement)) {
      if (tagsOk !== null && !tagsOk(m.tags)) continue;
      const cut = below === undefined ? undefined : (below[m.partition] ?? 0);
      const parts = cut === undefined ? m.parts : m.parts.filter((p) => p.offset < cut);
      out.push({ kind: 'mem', partition: m.partition, tags: m.tags, parts, hw: this.opts.sources.highWater(m.partition, m.ds) });
    }
    const first = out.length;
    const list = this.opts.sources.segments(repoId, placement);
    // Visited newest first as the list was last seen (newestFirstOf); sorted below only when the
    // units did not come out in order. Each unit's newest time and list index, for that check.
    const newest: number[] = [];
    const ks: number[] = [];
    let ordered = true;
    const order = newestFirstOf(list);
    for (let j = 0; j < order.length; j++) {
      const k = order[j]!;
      const seg = list[k]!;
      if (tagsOk !== null && !tagsOk(seg.meta.tags)) continue;
      const cut = below === undefined ? undefined : (below[seg.meta.partition] ?? 0);
      const refs = segmentRefs(seg.blocks);
      let unit: SegUnit;
      let latest = refs.maxTs;
      if (cut === undefined && refs.minTs >= start && refs.maxTs <= end) {
        if (refs.refs.length === 0) continue;
        unit = wholeUnit(seg, refs.refs);
      } else {
        // Not every block in range or below the cut: a new list of those that are (the refs shared).
        const picked: BlockRef[] = [];
        latest = -Infinity;
        for (let i = 0; i < refs.refs.length; i++) {
          const b = seg.blocks[i]!;
          if (b.maxTs < start || b.minTs > end || (cut !== undefined && b.firstOffset >= cut)) continue;
          picked.push(cut !== undefined && b.lastOffset >= cut ? { ...refs.refs[i]!, below: cut } : refs.refs[i]!);
          latest = Math.max(latest, b.maxTs);
        }
        if (picked.length === 0) continue;
        unit = { kind: 'seg', path: seg.path, partition: seg.meta.partition, tags: seg.meta.tags, blocks: picked };
      }
      const n = newest.length;
      if (n > 0 && (latest > newest[n - 1]! || (latest === newest[n - 1]! && k < ks[n - 1]!))) ordered = false;
      newest.push(latest);
      ks.push(k);
      out.push(unit);
    }
    // Newest first: partial results of a filter query fill from the recent end, as in the product;
    // segments of equal time in the list's order.
    if (!ordered) {
      const segs = out.slice(first);
      const byTime = Array.from(segs.keys()).sort((a, b) => newest[b]! - newest[a]! || ks[a]! - ks[b]!);
      for (let i = 0; i < byTime.length; i++) out[first + i] = segs[byTime[i]!]!;
    }
    return out;
  }

  private async execute(run: QueryRun, tasks: TaskOf[], headers: ScanResult[], peers: ReturnType<PeerScans['plan']>): Promise<QueryOutcome> {
    const deadline = run.startedAt + this.opts.maxQueryMs;
    const memory = this.opts.memory?.budget();
    // The coordinator's merges, finish and later stages are charged to the query's budget too.
    const meter = new Meter(memory ?? null);
    try {
      return await this.scanAndMerge(run, tasks, headers, peers, deadline, memory, meter);
    } finally {
      meter.releaseAll();
    }
  }

  /**
   * A query whose filters the blocks' bloom and gram filters may rule out, in more tasks than the
   * pool has threads: a first round of tasks that check those filters (from the threads' cached
   * heads) and scan what they let through when that is at most one task's bytes, their partials
   * handed to `take`; what a task let through beyond that is cut into tasks again (returned).
   * One first-round task per FIRST_ROUND_BLOCKS blocks, at most one per thread: a rare token over
   * 1-3 M access-log events is then one task on one thread, where it was a pruning task per
   * thread and then a scan task (two rounds of posts and wake-ups, and the scan's code compiled by
   * both threads' engines: ask.mjs, docs/benchmarks.md 2026-11-29). A common word pays one round
   * more. Returns the tasks left, and how many first-round tasks scanned their blocks.
   */
  private async firstRound(run: QueryRun, tasks: TaskOf[], deadline: number, memory: MemoryBudget | undefined, take: (r: ScanResult) => Promise<void>): Promise<{ tasks: TaskOf[]; scanned: number }> {
    const runner = this.opts.runner;
    const threads = this.opts.parallelism;
    if (runner.prune === undefined || run.query.pruning.bloom === null || tasks.length <= threads) return { tasks, scanned: 0 };
    let blocks = 0;
    for (const t of tasks) for (const u of t.units) blocks += u.kind === 'seg' ? u.blocks.length : 1;
    const per = Math.ceil(tasks.length / Math.min(threads, Math.ceil(blocks / FIRST_ROUND_BLOCKS)));
    const shares = Array.from({ length: Math.ceil(tasks.length / per) }, (_, k) => tasks.slice(k * per, (k + 1) * per));
    // A share is one source's when its tasks are (a view's sources each have their own prefix).
    const oneSource = (share: TaskOf[]): boolean => share.every((t) => t.repoName === share[0]!.repoName && t.prefix === share[0]!.prefix);
    let scanned = 0;
    const kept = await Promise.all(
      shares.map(async (share) => {
        const { repoName, prefix } = share[0]!;
        const task: PruneTask = { spec: run.spec, repoName, units: share.flatMap((t) => t.units), deadline, scanBytes: oneSource(share) ? this.opts.taskBytes : -1, ...(memory === undefined ? {} : { memory }), ...(prefix === '' ? {} : { prefix }) };
        const r = await runner.prune!(task);
        if ('kept' in r) return r.kept;
        scanned++;
        await take(r.scanned);
        return null;
      }),
    );
    // Each task's units with the blocks let through; then tasks cut again, source by source in order.
    const out: TaskOf[] = [];
    let source: { repoName: string; prefix: string; units: ScanUnit[] } | null = null;
    const cut = (): void => {
      if (source !== null) for (const units of cutIntoTasks(source.units, this.opts.taskBytes)) out.push({ units, repoName: source.repoName, prefix: source.prefix });
      source = null;
    };
    shares.forEach((share, k) => {
      const keep = kept[k];
      if (keep === null || keep === undefined) return;
      let i = 0;
      for (const t of share) {
        if (source === null || source.repoName !== t.repoName || source.prefix !== t.prefix) {
          cut();
          source = { repoName: t.repoName, prefix: t.prefix, units: [] };
        }
        for (const u of t.units) {
          const blocks = keep[i++];
          if (blocks === null || blocks === undefined || u.kind !== 'seg') source.units.push(u);
          else if (blocks.length > 0) source.units.push({ ...u, blocks: blocks.map((j) => u.blocks[j]!) });
        }
      }
    });
    cut();
    return { tasks: out, scanned };
  }

  private async scanAndMerge(run: QueryRun, tasks: TaskOf[], headers: ScanResult[], peers: ReturnType<PeerScans['plan']>, deadline: number, memory: MemoryBudget | undefined, meter: Meter): Promise<QueryOutcome> {
    const { agg, rest } = splitAtAggregate(run.query);
    const state = agg.init();
    // A streamed filter query: each partial goes to the sink as it arrives, nothing is merged.
    const sink = run.query.streamed === true ? run.sink : undefined;
    const warnings = run.warnings;
    for (const w of run.query.warnings ?? []) warnings.add(w);
    if (peers.unreachable.length > 0) warnings.add(MISSING_SEGMENTS_WARNING);
    let matched = 0;
    // What block headers answered (charged as it is merged, as a task's partial is).
    for (const h of headers) {
      withMeter(meter, () => agg.merge(state, h.state));
      run.processedEvents += h.events;
      matched += h.matched;
    }
    /**
     * A task's partial: to the sink, or merged (it arrived as a copy: charged while it is merged,
     * given back after; what the merge keeps is charged by the aggregator).
     */
    const take = async (r: ScanResult): Promise<void> => {
      if (sink !== undefined) await sink(r.state, deadline);
      else {
        const transit = approxBytes(r.state);
        meter.charge(transit);
        try {
          withMeter(meter, () => agg.merge(state, r.state));
        } finally {
          meter.release(transit);
        }
      }
      run.processedEvents += r.events;
      run.processedBytes += r.bytes;
      matched += r.matched;
      for (const w of r.warnings) warnings.add(w);
      run.workDone++;
    };
    run.totalWork = Math.max(1, tasks.length + peers.remotes.length);
    const first = await this.firstRound(run, tasks, deadline, memory, take);
    tasks = first.tasks;
    run.totalWork = Math.max(1, first.scanned + tasks.length + peers.remotes.length);
    // Each other live node's part runs alongside the local tasks; one that fails leaves its data out, said so.
    const remote = Promise.all(
      peers.remotes.map(async (r) => {
        try {
          const res = await r.scan();
          if (run.cancelled) return;
          if (sink !== undefined) await sink(res.state, deadline);
          else agg.merge(state, res.state);
          run.processedEvents += res.events;
          run.processedBytes += res.bytes;
          matched += res.matched;
          for (const w of res.warnings) warnings.add(w);
        } catch {
          warnings.add(MISSING_SEGMENTS_WARNING);
        }
        run.workDone++;
      }),
    );
    let next = 0;
    let failure: unknown = null;
    const worker = async (): Promise<void> => {
      while (next < tasks.length && failure === null && !run.cancelled) {
        const { units, repoName, prefix } = tasks[next++]!;
        try {
          const r = await this.opts.runner.scan({ spec: run.spec, repoName, units, deadline, ...(memory === undefined ? {} : { memory }), ...(prefix === '' ? {} : { prefix }) }, tasks.length <= this.opts.parallelism);
          if (failure !== null || run.cancelled) break;
          await take(r);
        } catch (err) {
          failure ??= err;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.opts.parallelism, Math.max(1, tasks.length)) }, worker));
    await remote;
    if (failure !== null) throw failure;
    if (first.scanned + tasks.length === 0 && peers.remotes.length === 0) run.workDone = 1;
    for (const w of agg.warnings?.(state) ?? []) warnings.add(w);
    // The stages after the first aggregate run here, over rows.
    const finished = withMeter(meter, () => agg.finish(state));
    // The result rows are new objects next to the state (kept until the query ends).
    meter.charge(approxBytes(finished));
    const rows = await runRowsAsync(run.query.stages.slice(rest), finished, (w) => warnings.add(w), (fn) => withMeter(meter, fn));
    return { rows, matched, warnings: [...warnings] };
  }
}
