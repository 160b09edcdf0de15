/**
 * QueryService: what the REST query endpoints call. It validates the request body (api-facts §1.2),
 * resolves the time range, bounds how many queries run at once, starts static runs on the
 * executor, and follows live filter queries: the historical part first, then every later event,
 * each exactly once. On one node the executor's snapshot and the subscription to the digest happen
 * in the same synchronous step; on a cluster the live part starts at the Kafka tail's position and
 * the historical part is cut there (`LiveBoundarySource`, cluster/live-boundary.ts).
 */
import { QueryScheduler, type Release, type SchedulerOptions } from './scheduler.js';
import { decodeGroupEvents, eventId, groupSection, type RecordSummary } from '../events/index.js';
import { LogsvcError } from '../lib/errors.js';
import type { DurableRecord } from '../queue/index.js';
import type { PartialSink, QueryExecutor, QueryRun, SearchTarget } from './executor.js';
import { applyInterval, preambleOf, runSubqueries } from './subqueries.js';
import { MapEvent, type Ev, type DataFiles, type QueryContext, type QueryLimits } from './runtime.js';
import { chainStages } from './pipeline.js';
import { prefixStages, splitAtAggregate, type QuerySpec } from './scan.js';
import { resolveRange } from './time.js';
import { fileNamesInTree } from './file-refs.js';
import { keepParsed } from './compile.js';
import { parsedQuery } from './params.js';
import { expandSavedCalls, type SavedLookup } from './saved-calls.js';
import type { PackedTable } from '../files/packed.js';
import type { RdnsSettings } from './rdns.js';

export interface QueryRequest {
  queryString: string;
  start: string | number | undefined;
  end: string | number | undefined;
  isLive: boolean;
  timeZoneOffsetMinutes: number;
  arguments: Record<string, string>;
}

const MAX_QUERY_CHARS = 64 * 1024;
const MAX_ARGUMENTS = 100;
const MAX_ARGUMENT_CHARS = 4096;

/** Checks a request body field by field; a 400 names the first bad field. */
export function parseQueryRequest(body: unknown): QueryRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new LogsvcError('E_VALIDATION', 'the request body must be a JSON object with a "queryString"');
  const b = body as Record<string, unknown>;
  if (typeof b.queryString !== 'string') throw new LogsvcError('E_VALIDATION', 'queryString: required, a string (may be empty: all events)');
  if (b.queryString.length > MAX_QUERY_CHARS) throw new LogsvcError('E_VALIDATION', `queryString: longer than ${MAX_QUERY_CHARS} characters`);
  const time = (name: 'start' | 'end'): string | number | undefined => {
    const v = b[name];
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string' || typeof v === 'number') return v;
    throw new LogsvcError('E_VALIDATION', `${name}: must be a relative time string such as "24hours" or epoch milliseconds`);
  };
  let isLive = false;
  if (b.isLive !== undefined && b.isLive !== null) {
    if (typeof b.isLive !== 'boolean') throw new LogsvcError('E_VALIDATION', 'isLive: must be true or false');
    isLive = b.isLive;
  }
  let tz = 0;
  if (b.timeZoneOffsetMinutes !== undefined && b.timeZoneOffsetMinutes !== null) {
    const v = b.timeZoneOffsetMinutes;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < -24 * 60 || v > 24 * 60) throw new LogsvcError('E_VALIDATION', 'timeZoneOffsetMinutes: must be an integer from -1440 to 1440');
    tz = v;
  }
  const args: Record<string, string> = Object.create(null) as Record<string, string>;
  if (b.arguments !== undefined && b.arguments !== null) {
    if (typeof b.arguments !== 'object' || Array.isArray(b.arguments)) throw new LogsvcError('E_VALIDATION', 'arguments: must be an object of parameter names to string values');
    const entries = Object.entries(b.arguments as Record<string, unknown>);
    if (entries.length > MAX_ARGUMENTS) throw new LogsvcError('E_VALIDATION', `arguments: more than ${MAX_ARGUMENTS} parameters`);
    for (const [k, v] of entries) {
      if (typeof v !== 'string' && typeof v !== 'number') throw new LogsvcError('E_VALIDATION', `arguments.${k.slice(0, 100)}: must be a string`);
      const s = String(v);
      if (s.length > MAX_ARGUMENT_CHARS) throw new LogsvcError('E_VALIDATION', `arguments.${k.slice(0, 100)}: longer than ${MAX_ARGUMENT_CHARS} characters`);
      args[k] = s;
    }
  }
  return { queryString: b.queryString, start: time('start'), end: time('end'), isLive, timeZoneOffsetMinutes: tz, arguments: args };
}

type RecordListener = (r: DurableRecord, summary: RecordSummary) => void;

/** What live following needs from the digest (one node: it hears each record right after the digest took it). */
export interface LiveSource {
  onRecord(listener: RecordListener): () => void;
}

/**
 * A cluster's live records (docs/cluster.md, "Live queries"): `listen` adds a listener to the Kafka
 * tail and resolves with the tail's position per partition, from which the listener hears every
 * record; `settle` waits (bounded) until this node's digest has read up to such a position in the
 * partitions it digests.
 */
export interface LiveBoundarySource {
  listen(listener: RecordListener): Promise<{ from: readonly number[]; stop: () => void }>;
  settle(below: readonly number[]): Promise<void>;
}

/** Loads the lookup tables a query names (src/files), by the names it uses. */
export interface QueryFileSource {
  tablesFor(repositoryId: string, names: readonly string[]): Promise<Record<string, PackedTable>>;
}

export interface QueryServiceOptions {
  executor: QueryExecutor;
  /** Lookup files for match()/lookup(); without it a query naming a file fails to compile. */
  files?: QueryFileSource;
  live: LiveSource;
  /** A cluster: live queries start at the Kafka tail's position instead of `live`. */
  boundary?: LiveBoundarySource;
  limits: QueryLimits;
  maxConcurrent: number;
  /** Fair admission (src/query/scheduler.ts); without it only maxConcurrent applies. */
  scheduling?: Omit<SchedulerOptions, 'maxConcurrent'> & {
    /** Bytes a query over `repoId` from `start` to `end` would scan, estimated from the segment catalog. */
    estimateBytes: (repoId: string, start: number, end: number) => number;
  };
  now: () => number;
  /** Called when a run settles (the node's metrics read its time, bytes and outcome). */
  onFinished?: (run: QueryRun) => void;
  /** Data files for ipLocation()/asn()/ioc:lookup() (config query.*_file). */
  dataFiles?: DataFiles;
  /** Reverse DNS for reverseDns()/rdns() (config query.rdns_*); without it those functions fail. */
  rdns?: RdnsSettings;
  /** Saved searches of a search domain, for `$name()` calls (without it such a call fails to parse). */
  savedQueries?: (searchDomainId: string) => SavedLookup;
}

/** A repository, or a view (its `sources`: each connected repository with the connection's filter). */
export type Repo = SearchTarget;

export class QueryService {
  private readonly scheduler: QueryScheduler;

  constructor(private readonly opts: QueryServiceOptions) {
    const sc = opts.scheduling;
    this.scheduler = new QueryScheduler({
      maxConcurrent: opts.maxConcurrent,
      maxPerUser: sc?.maxPerUser ?? opts.maxConcurrent,
      largeBytes: sc?.largeBytes ?? Number.MAX_SAFE_INTEGER,
      queueTimeoutMs: sc?.queueTimeoutMs ?? 0,
      maxQueued: sc?.maxQueued ?? 0,
    });
  }

  /** The spec of `req` with its time range resolved now. */
  spec(req: QueryRequest): QuerySpec {
    const now = this.opts.now();
    const { start, end } = resolveRange(req.start, req.end, now, req.isLive);
    const ctx: QueryContext = { start, end, timeZoneOffsetMinutes: req.timeZoneOffsetMinutes, now, live: req.isLive };
    if (this.opts.dataFiles !== undefined) ctx.dataFiles = this.opts.dataFiles;
    if (this.opts.rdns !== undefined) ctx.rdns = this.opts.rdns;
    return { text: req.queryString, args: req.arguments, ctx, limits: this.opts.limits };
  }

  /**
   * The spec of `req` with the lookup tables it names loaded (once per content hash; later runs of
   * the same spec, such as live refreshes, keep these tables).
   */
  async prepare(request: QueryRequest, repo: Repo): Promise<QuerySpec> {
    const expanded = this.opts.savedQueries === undefined ? request.queryString : expandSavedCalls(request.queryString, this.opts.savedQueries(repo.id));
    const req = expanded === request.queryString ? request : { ...request, queryString: expanded };
    const spec = this.spec(req);
    // Parsed once: the preamble, the file references and the executor's compile read this tree.
    const tree = parsedQuery(req.queryString, req.arguments);
    keepParsed(spec, tree);
    // setTimeInterval(), defineTable() and join() (subqueries.ts): the range, and tables run first.
    const pre = preambleOf(req.queryString, req.arguments, tree);
    spec.ctx = applyInterval(spec.ctx, pre, req.queryString);
    const defined = new Set(pre.subqueries.filter((s) => s.kind === 'defineTable').map((s) => s.key));
    const names = fileNamesInTree(tree).filter((n) => !defined.has(n));
    if (names.length > 0 && this.opts.files !== undefined) spec.files = await this.opts.files.tablesFor(repo.id, names);
    if (pre.subqueries.length > 0) {
      const tables = await runSubqueries(pre, spec.ctx, req.queryString, req.arguments, spec.limits.maxRows, async (text, ctx) => {
        const sub: QuerySpec = { ...spec, text, ctx, files: { ...(spec.files ?? {}) } };
        const run = this.opts.executor.start(sub, repo);
        await run.done;
        if (run.error !== null) throw run.error;
        return { rows: run.outcome!.rows };
      });
      spec.files = { ...(spec.files ?? {}), ...tables };
    }
    return spec;
  }

  /** Starts a run of `spec` over `repo` now; 429 when no slot is free (query jobs, alerts, live refreshes). */
  run(spec: QuerySpec, repo: Repo, user = '', sink?: PartialSink): QueryRun {
    return this.started(spec, repo, this.scheduler.tryAcquire(user, this.isLarge(spec, repo)), sink);
  }

  /**
   * Starts a run of `spec` over `repo` once the scheduler gives it a slot (per-user and global
   * bounds, small queries ahead of large ones); 429 after query.queue_timeout_ms in line.
   */
  async runQueued(spec: QuerySpec, repo: Repo, user: string, sink?: PartialSink): Promise<QueryRun> {
    return this.started(spec, repo, await this.scheduler.acquire(user, this.isLarge(spec, repo)), sink);
  }

  private started(spec: QuerySpec, repo: Repo, release: Release, sink?: PartialSink): QueryRun {
    let run: QueryRun;
    try {
      run = this.opts.executor.start(spec, repo, sink);
    } catch (err) {
      release();
      throw err;
    }
    void run.done.finally(() => {
      release();
      this.opts.onFinished?.(run);
    });
    return run;
  }

  private isLarge(spec: QuerySpec, repo: Repo): boolean {
    const sc = this.opts.scheduling;
    return sc !== undefined && sc.estimateBytes(repo.id, spec.ctx.start, spec.ctx.end) > sc.largeBytes;
  }

  /** Running and waiting queries (for metrics). */
  schedulerStats(): ReturnType<QueryScheduler['stats']> {
    return this.scheduler.stats();
  }

  /** Runs in progress. */
  get runningCount(): number {
    return this.scheduler.stats().running;
  }

  compile(spec: QuerySpec): ReturnType<QueryExecutor['compile']> {
    return this.opts.executor.compile(spec);
  }

  /**
   * A live filter query: the historical run, and `onEvent` for every later event of `repo` that
   * passes the filters, each event in exactly one of them. Call `stop()` when the client leaves.
   * With `spec.stream`, the historical run's partials go to `sink` as they arrive (every matching
   * event, not tail(200)).
   */
  async follow(spec: QuerySpec, repo: Repo, onEvent: (e: Ev) => void, sink?: PartialSink): Promise<{ historical: QueryRun; stop: () => void }> {
    const query = this.compile(spec);
    if (query.isAggregate) throw new LogsvcError('E_VALIDATION', 'live aggregate queries are not served by /query; start a live query job (POST .../queryjobs) instead');
    // The historical part takes every event before the live part's start, whatever its timestamp
    // (one digested after `now` was taken, or stamped ahead of this clock, is not in the live part).
    const historicalSpec: QuerySpec = { ...spec, ctx: { ...spec.ctx, end: Number.MAX_SAFE_INTEGER } };
    const listener = this.liveListener(spec, repo, query, onEvent);
    const boundary = this.opts.boundary;
    if (boundary === undefined) {
      // The snapshot and the subscription in one synchronous step.
      const historical = this.run(historicalSpec, repo, '', sink);
      return { historical, stop: this.opts.live.onRecord(listener) };
    }
    const sub = await boundary.listen(listener);
    try {
      await boundary.settle(sub.from);
      return { historical: this.run({ ...historicalSpec, below: [...sub.from] }, repo, '', sink), stop: sub.stop };
    } catch (err) {
      sub.stop();
      throw err;
    }
  }

  /** What a live query does with each new record: its events of `repo` through the query's filters to `onEvent`. */
  private liveListener(spec: QuerySpec, repo: Repo, query: ReturnType<QueryExecutor['compile']>, onEvent: (e: Ev) => void): RecordListener {
    const { maps } = splitAtAggregate(query);
    // Per source repository: its name for #repo and, in a view, the connection's filter first.
    const feeds = new Map((repo.sources ?? [{ id: repo.id, name: repo.name, filter: '' }]).map((src) => [src.id, { name: src.name, feed: chainStages([...prefixStages(spec, src.filter), ...maps], onEvent) }]));
    const tagsOk = query.pruning.tags ?? ((): boolean => true);
    const range = spec.ctx.end - spec.ctx.start;
    return (r, summary) => {
      const source = feeds.get(summary.repo);
      if (source === undefined) return;
      const feed = source.feed;
      const oldest = this.opts.now() - range;
      let base = 0;
      summary.groups.forEach((g, gi) => {
        const first = base;
        base += g.n;
        if (!tagsOk(g.tags)) return;
        const events = decodeGroupEvents(groupSection(r.payload, summary, gi));
        events.forEach((e, i) => {
          if (e.timestamp < oldest) return;
          const ev = new MapEvent([
            ['@timestamp', String(e.timestamp)],
            ['@rawstring', e.rawstring],
            ['@id', eventId(r.partition, r.offset, first + i, e.timestamp)],
            ['@timezone', e.timezone],
            ['@ingesttimestamp', String(summary.at)],
            ['#repo', source.name],
            ...Object.entries(g.tags).map(([k, v]) => [`#${k}`, v] as const),
            ...Object.entries(e.fields),
          ]);
          feed(ev);
        });
      });
    };
  }
}
