/**
 * Prometheus metrics (GET /metrics, text exposition format), and the project's only importer of
 * prom-client. Counters and histograms are bumped by the components through the small `NodeMetrics`
 * interface; everything that is a level (queue lag, segments, pool utilisation) is read from its
 * owner only when a scrape asks (a gauge's `collect`), so a node nobody scrapes pays for a few
 * counter increments and nothing else.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { residentMemory } from '../lib/process-memory.js';
import { EVENT_LOOP_SAMPLE_MS } from '../lib/runtime-metrics.js';

/** What the node's components report as it happens (all cheap: an increment or a bucket). */
export interface NodeMetrics {
  httpRequest(route: string, method: string, status: number, seconds: number): void;
  ingested(repository: string, events: number, bytes: number): void;
  digestLatency(ms: number): void;
  queryFinished(kind: 'search' | 'live', outcome: 'ok' | 'error' | 'cancelled', seconds: number, bytesScanned: number, eventsScanned: number): void;
  alertEvaluated(outcome: 'ok' | 'error'): void;
  actionFailed(kind: string): void;
  selfLogDropped(n: number): void;
}

/** Levels read at scrape time from the components that own them. */
export interface MetricSources {
  /** Per partition: bytes acknowledged but not yet in segments (queue end minus checkpoint). */
  partitionLag(): Iterable<{ partition: number; lagBytes: number; endOffset: number }>;
  queueBytes(): number;
  segments(): { count: number; bytes: number; open: number };
  /** Per pool: utilisation (0..1), queued tasks, threads. */
  pools(): Iterable<{ pool: string; utilization: number; queued: number; threads: number }>;
  repositoryName(id: string): string | undefined;
  runningQueries(): number;
  queryJobs(): number;
  /** A cluster's segment replication (null on a single node). */
  replication?(): { bytesReceived: number; bytesSent: number; active: number; queued: number; sending: number; underReplicated: number; lagMs: number } | null;
  /** Connections the cluster port refused because the peer did not prove the cluster secret (null: not a cluster). */
  clusterAuthFailures?(): number | null;
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
/** Repositories beyond this many get one series together ("_other"), so a scrape stays bounded. */
const MAX_REPOSITORY_SERIES = 1000;
/** Likewise for routes (they are patterns, so this only guards against a bug). */
const MAX_ROUTE_SERIES = 500;

export class PrometheusMetrics implements NodeMetrics {
  readonly registry = new Registry();
  private readonly http: Counter<'route' | 'method' | 'status'>;
  private readonly httpSeconds: Histogram<'route' | 'method'>;
  private readonly ingestEvents: Counter<'repository'>;
  private readonly ingestBytes: Counter<'repository'>;
  private readonly digestSeconds: Histogram;
  private readonly queries: Counter<'kind' | 'outcome'>;
  private readonly querySeconds: Histogram<'kind'>;
  private readonly queryBytes: Counter<'kind'>;
  private readonly queryEvents: Counter<'kind'>;
  private readonly alertEvals: Counter<'outcome'>;
  private readonly actionFailures: Counter<'kind'>;
  private readonly selfLogDrops: Counter;
  private readonly repoSeries = new Set<string>();
  private readonly routeSeries = new Set<string>();

  constructor(private readonly sources: MetricSources) {
    const r = this.registry;
    const registers = [r];
    // Event-loop lag sampled every 20 ms, as RuntimeMonitor samples it (prom-client's default is 10 ms:
    // 100 wake-ups a second of an idle node's main thread for this alone).
    collectDefaultMetrics({ register: r, prefix: 'logsvc_', eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
    this.http = new Counter({ name: 'logsvc_http_requests_total', help: 'HTTP requests answered, by route pattern, method and status', labelNames: ['route', 'method', 'status'], registers });
    this.httpSeconds = new Histogram({ name: 'logsvc_http_request_duration_seconds', help: 'time from request to reply (streamed replies: to the first byte)', labelNames: ['route', 'method'], buckets: LATENCY_BUCKETS, registers });
    this.ingestEvents = new Counter({ name: 'logsvc_ingest_events_total', help: 'events made durable in the digest queue, by repository', labelNames: ['repository'], registers });
    this.ingestBytes = new Counter({ name: 'logsvc_ingest_bytes_total', help: 'encoded record bytes made durable in the digest queue, by repository', labelNames: ['repository'], registers });
    this.digestSeconds = new Histogram({ name: 'logsvc_digest_latency_seconds', help: 'time from acknowledgement to the event being searchable in an open block', buckets: LATENCY_BUCKETS, registers });
    this.queries = new Counter({ name: 'logsvc_queries_total', help: 'query runs finished, by kind and outcome', labelNames: ['kind', 'outcome'], registers });
    this.querySeconds = new Histogram({ name: 'logsvc_query_duration_seconds', help: 'time one query run took', labelNames: ['kind'], buckets: LATENCY_BUCKETS, registers });
    this.queryBytes = new Counter({ name: 'logsvc_query_scanned_bytes_total', help: 'uncompressed event bytes queries scanned', labelNames: ['kind'], registers });
    this.queryEvents = new Counter({ name: 'logsvc_query_scanned_events_total', help: 'events queries scanned', labelNames: ['kind'], registers });
    this.alertEvals = new Counter({ name: 'logsvc_alert_evaluations_total', help: 'alert evaluations, by outcome', labelNames: ['outcome'], registers });
    this.actionFailures = new Counter({ name: 'logsvc_action_failures_total', help: 'alert actions that failed after their retries, by action kind', labelNames: ['kind'], registers });
    this.selfLogDrops = new Counter({ name: 'logsvc_self_log_dropped_total', help: "the node's own log lines not ingested into the humio repository (buffer full or ingest refused)", registers });

    const src = this.sources;
    new Gauge({
      name: 'logsvc_queue_lag_bytes',
      help: 'bytes acknowledged into a digest partition and not yet in durable segments',
      labelNames: ['partition'],
      registers,
      collect() {
        this.reset();
        for (const p of src.partitionLag()) this.set({ partition: String(p.partition) }, p.lagBytes);
      },
    });
    new Gauge({
      name: 'logsvc_queue_end_offset_bytes',
      help: 'end offset of a digest partition (bytes ever appended to it)',
      labelNames: ['partition'],
      registers,
      collect() {
        this.reset();
        for (const p of src.partitionLag()) this.set({ partition: String(p.partition) }, p.endOffset);
      },
    });
    new Gauge({ name: 'logsvc_queue_bytes', help: 'bytes held in digest queue files, all partitions', registers, collect() { this.set(src.queueBytes()); } });
    new Gauge({ name: 'logsvc_segments', help: 'segment files in the catalog', labelNames: ['state'], registers, collect() {
      const s = src.segments();
      this.set({ state: 'closed' }, s.count - s.open);
      this.set({ state: 'open' }, s.open);
    } });
    new Gauge({ name: 'logsvc_segment_bytes', help: 'bytes of all segment files', registers, collect() { this.set(src.segments().bytes); } });
    new Gauge({ name: 'logsvc_worker_pool_utilization', help: 'share of the pool threads\' time spent running tasks since the pool started (0..1)', labelNames: ['pool'], registers, collect() {
      for (const p of src.pools()) this.set({ pool: p.pool }, p.utilization);
    } });
    new Gauge({ name: 'logsvc_worker_pool_queued_tasks', help: 'tasks waiting for a worker thread', labelNames: ['pool'], registers, collect() {
      for (const p of src.pools()) this.set({ pool: p.pool }, p.queued);
    } });
    new Gauge({ name: 'logsvc_worker_pool_threads', help: 'worker threads alive', labelNames: ['pool'], registers, collect() {
      for (const p of src.pools()) this.set({ pool: p.pool }, p.threads);
    } });
    new Gauge({ name: 'logsvc_process_resident_bytes', help: 'resident memory by kind (Linux): anon (heaps, malloc, stacks), file (executable, libraries, native modules), shmem', labelNames: ['kind'], registers, collect() {
      const m = residentMemory();
      if (m === null) return;
      this.set({ kind: 'anon' }, m.anon);
      this.set({ kind: 'file' }, m.file);
      this.set({ kind: 'shmem' }, m.shmem);
    } });
    new Gauge({ name: 'logsvc_queries_running', help: 'query runs in progress', registers, collect() { this.set(src.runningQueries()); } });
    new Gauge({ name: 'logsvc_query_jobs', help: 'query jobs held (running or waiting to be polled)', registers, collect() { this.set(src.queryJobs()); } });
    if (src.replication !== undefined) this.replicationMetrics(src.replication.bind(src), registers);
    if (src.clusterAuthFailures !== undefined) {
      const read = src.clusterAuthFailures.bind(src);
      let seen = 0;
      new Counter({ name: 'logsvc_cluster_auth_failures_total', help: 'cluster connections refused because the peer did not prove the cluster secret', registers, collect() {
        const n = read();
        if (n === null) return;
        if (n > seen) this.inc(n - seen);
        seen = n;
      } });
    }
  }

  private replicationMetrics(read: NonNullable<MetricSources['replication']>, registers: Registry[]): void {
    // Totals kept by the replicator, turned into counters by the difference since the last scrape.
    const seen = { bytesReceived: 0, bytesSent: 0 };
    const total = (name: string, help: string, key: 'bytesReceived' | 'bytesSent'): void => {
      new Counter({ name, help, registers, collect() {
        const r = read();
        if (r === null) return;
        if (r[key] > seen[key]) this.inc(r[key] - seen[key]);
        seen[key] = r[key];
      } });
    };
    total('logsvc_replication_received_bytes_total', 'segment bytes copied into this node from its peers', 'bytesReceived');
    total('logsvc_replication_sent_bytes_total', 'segment bytes this node sent to peers copying them', 'bytesSent');
    new Gauge({ name: 'logsvc_replication_transfers', help: 'segment copies into this node, by state', labelNames: ['state'], registers, collect() {
      const r = read();
      if (r === null) return;
      this.set({ state: 'active' }, r.active);
      this.set({ state: 'queued' }, r.queued);
    } });
    new Gauge({ name: 'logsvc_replication_outbound_transfers', help: 'segment copies this node is sending to peers now', registers, collect() {
      const r = read();
      if (r !== null) this.set(r.sending);
    } });
    new Gauge({ name: 'logsvc_replication_under_replicated_segments', help: 'segments held by fewer live nodes than the replication factor (a dead holder does not count)', registers, collect() {
      const r = read();
      if (r !== null) this.set(r.underReplicated);
    } });
    new Gauge({ name: 'logsvc_replication_lag_seconds', help: 'age of the oldest segment this node wrote that is not yet held by enough nodes', registers, collect() {
      const r = read();
      if (r !== null) this.set(r.lagMs / 1000);
    } });
  }

  httpRequest(route: string, method: string, status: number, seconds: number): void {
    const r = this.bounded(this.routeSeries, route, MAX_ROUTE_SERIES);
    this.http.inc({ route: r, method, status: String(status) });
    this.httpSeconds.observe({ route: r, method }, seconds);
  }

  ingested(repositoryId: string, events: number, bytes: number): void {
    const name = this.bounded(this.repoSeries, this.sources.repositoryName(repositoryId) ?? repositoryId, MAX_REPOSITORY_SERIES);
    this.ingestEvents.inc({ repository: name }, events);
    this.ingestBytes.inc({ repository: name }, bytes);
  }

  digestLatency(ms: number): void {
    this.digestSeconds.observe(ms / 1000);
  }

  queryFinished(kind: 'search' | 'live', outcome: 'ok' | 'error' | 'cancelled', seconds: number, bytesScanned: number, eventsScanned: number): void {
    this.queries.inc({ kind, outcome });
    this.querySeconds.observe({ kind }, seconds);
    if (bytesScanned > 0) this.queryBytes.inc({ kind }, bytesScanned);
    if (eventsScanned > 0) this.queryEvents.inc({ kind }, eventsScanned);
  }

  alertEvaluated(outcome: 'ok' | 'error'): void {
    this.alertEvals.inc({ outcome });
  }

  actionFailed(kind: string): void {
    this.actionFailures.inc({ kind });
  }

  selfLogDropped(n: number): void {
    this.selfLogDrops.inc(n);
  }

  /** The scrape: every metric in the text exposition format. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  private bounded(seen: Set<string>, label: string, max: number): string {
    if (seen.has(label)) return label;
    if (seen.size >= max) return '_other';
    seen.add(label);
    return label;
  }
}

/** Metrics that go nowhere (tests and tools that build components without a node). */
export const noMetrics: NodeMetrics = {
  httpRequest() {},
  ingested() {},
  digestLatency() {},
  queryFinished() {},
  alertEvaluated() {},
  actionFailed() {},
  selfLogDropped() {},
};
