/**
 * The composition root: builds every service from the effective config, starts them in order
 * (data dir lock, keys, global state, users, admin token, health, HTTP, cluster registration) and
 * stops them in reverse. Nothing else constructs services.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { effectiveExternalUrl, type NodeConfig } from '../config/index.js';
import { systemClock, type Clock } from '../lib/clock.js';
import { LogsvcError } from '../lib/errors.js';
import { LatencyWindow } from '../lib/latency-window.js';
import { createLogger, teeLogger, withModule, type Logger } from '../lib/logger.js';
import { noMetrics, PrometheusMetrics, type NodeMetrics } from '../metrics/prometheus.js';
import { SELF_LOG_REPOSITORY, SelfLogs } from '../selflogs/self-logs.js';
import { VERSION } from '../lib/version.js';
import { RuntimeMonitor } from '../lib/runtime-metrics.js';
import { atomicWriteFile, DataDirLock, diskUsage, ensureDir, ensureReserve, isNoSpaceError, releaseReserve } from '../storage/index.js';
import { EmbeddedGlobalLog, GlobalStore } from '../global/index.js';
import { Authenticator, newApiToken, SecretBox, tokenDigest } from '../auth/index.js';
import { UserService } from '../accounts/user-service.js';
import { GroupService } from '../accounts/group-service.js';
import { RepositoryService } from '../repositories/repository-service.js';
// Not the cluster barrel (cluster/index.ts): it loads the cluster protocol, which a single node never runs.
import { ClusterService, SelfLiveness, type Liveness } from '../cluster/cluster-service.js';
import type { DigestOwnership } from '../cluster/digest-ownership.js';
import type { SegmentReplicator } from '../cluster/replication.js';
import { holdersOf } from '../global/segment-holdings.js';
import { HealthService } from '../health/index.js';
import { lazyGraphqlEndpoint } from '../graphql/lazy.js';
import { buildRouter, closeQueryStreams, startHttpServer, type HttpServer } from '../http/index.js';
// Not the queue barrel: it loads the Kafka queue and client, which only a cluster opens.
import { EmbeddedDigestQueue } from '../queue/embedded-queue.js';
import { kafkaConnection, openDigestQueue } from '../queue/open-queue.js';
import { SegmentCatalog, type SegmentInfo } from '../segments/catalog.js';
import { SegmentDeletions } from '../segments/deletions.js';
import { deletionCrashStep, rewriteCrashStep } from './crash-seams.js';
import { peerDiskOf, type PeerDisk } from './heartbeat-payload.js';
import { IngestCounter, raiseRetentionBounds, RetentionService } from '../retention/index.js';
import { RedactionService } from '../redaction/index.js';
import { SegmentRewrites } from '../segments/rewrites.js';
import { ViewService, viewTarget } from '../views/view-service.js';
import { SavedQueryService } from '../saved-queries/saved-query-service.js';
import { expandSavedCalls } from '../query/saved-calls.js';
import { Digest } from '../digest/index.js';
import { WorkerPool } from '../workers/pool.js';
import { IngestService } from '../ingest/index.js';
import { bytesInRange, NodeQueryMemory, QueryExecutor, QueryJobRegistry, QueryService } from '../query/index.js';

import { ListenerService } from '../ingest/listeners/listener-service.js';
import { ListenerManager } from '../ingest/listeners/manager.js';
import { BlobStore, FileService } from '../files/index.js';
import { ParserService } from '../parsers/index.js';
import { runStopSteps, stopStep, type StopReport, type StopStep } from './stop.js';
import { ActionService, AlertService, publishAlertNode } from '../alerts/index.js';
import { startAlerting } from './alerting-start.js';
import { querySources } from './query-sources.js';

export const LOCAL_ADMIN_TOKEN_FILE = 'local-admin-token.txt';
const NODE_UUID_FILE = 'cluster_membership.uuid';
/** Room for multipart boundaries, part headers and small form fields around an uploaded file. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

export interface RunningNode {
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  /** Bounded (src/node/stop.ts): resolves within STOP_LIMIT_MS, saying whether every step finished. */
  stop(): Promise<StopReport>;
}

async function nodeUuid(dataDir: string): Promise<string> {
  const path = join(dataDir, NODE_UUID_FILE);
  try {
    const v = (await readFile(path, 'utf8')).trim();
    if (/^[0-9a-f-]{36}$/.test(v)) return v;
    throw new LogsvcError('E_DATA_DIR_UNUSABLE', `${path} does not hold a UUID`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const uuid = randomUUID();
  await atomicWriteFile(path, `${uuid}\n`);
  return uuid;
}

/** Liveness that starts as a lone node's and becomes the cluster membership once it runs. */
class LivenessSeam implements Liveness {
  constructor(public current: Liveness) {}
  isAlive(nodeId: number): boolean {
    return this.current.isAlive(nodeId);
  }
  lastHeartbeat(nodeId: number): number | null {
    return this.current.lastHeartbeat(nodeId);
  }
}

/** The cluster's id: the first ClusterCreated in global-events (proposed here if there is none). */
async function clusterIdOf(store: GlobalStore, clock: Clock): Promise<string> {
  if (store.state.cluster.clusterId === null) await store.publish([{ type: 'ClusterCreated', clusterId: randomUUID(), at: clock.now() }]);
  for (let i = 0; i < 600 && store.state.cluster.clusterId === null; i++) await new Promise((r) => setTimeout(r, 50));
  const id = store.state.cluster.clusterId;
  if (id === null) throw new LogsvcError('E_UNAVAILABLE', 'the cluster id did not come back from global-events within 30 s');
  return id;
}

export interface StartOptions {
  logger?: Logger;
  clock?: Clock;
  /**
   * Called when the node can no longer promise durability (a failed fsync of the digest queue or of
   * a segment): the caller must stop the process. Defaults to logging and exiting with code 70.
   */
  onFatal?: (err: Error) => void;
}

export async function startNode(config: NodeConfig, opts: StartOptions = {}): Promise<RunningNode> {
  // Prometheus counters once built below (metrics.enabled); until then, and without, nowhere.
  let metrics: NodeMetrics = noMetrics;
  const baseLogger = opts.logger ?? createLogger(config.node.log_level);
  // The node's own lines go to `humio` too (buffered from here on, ingested once the node serves).
  const selfLogs = config.self_logs.enabled ? new SelfLogs({ stderr: baseLogger, bufferLines: config.self_logs.buffer_lines, nodeId: config.node.id, onDropped: (n) => metrics.selfLogDropped(n) }) : null;
  const logger = selfLogs === null ? baseLogger : teeLogger(baseLogger, config.self_logs.level, selfLogs.push);
  /** The logger of one part of the node (its lines carry module=<name>). */
  const log = (module: string): Logger => withModule(logger, module);
  let fatal: Error | null = null;
  // Once the stop has begun, a failure is what a step left behind by its bound meets (a digest task
  // whose worker the pools' close ended): what was not written stays in the queue and is replayed at
  // the next start, so the stop goes on and ends unclean (exit 1) instead of exiting 70.
  let unwinding = false;
  const failedDuringStop: string[] = [];
  const onFatal = (err: Error): void => {
    if (unwinding) {
      logger.error('failure during the stop; what was not written is replayed from the queue at the next start', { error: err.message });
      failedDuringStop.push(err.message);
      return;
    }
    if (fatal !== null) return;
    fatal = err;
    logger.error('fatal: durability can no longer be guaranteed; stopping', { error: err.message });
    (opts.onFatal ?? (() => process.exit(70)))(err);
  };
  const clock = opts.clock ?? systemClock;
  const dataDir = resolve(config.node.data_dir);
  try {
    await ensureDir(dataDir);
  } catch (err) {
    throw new LogsvcError('E_DATA_DIR_UNUSABLE', `cannot create data dir ${dataDir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  // A disk too full for the lock file: the reserve (src/storage/reserve.ts) is given back and the
  // node starts read-only (ingest refused until there is room again).
  let startedFull = 0;
  const lock = await DataDirLock.acquire(dataDir).catch(async (err: unknown) => {
    if (!isNoSpaceError(err) || (startedFull = await releaseReserve(dataDir)) === 0) throw err;
    logger.error('the disk is full: starting read-only (ingest refused until space returns)', { dataDir });
    return DataDirLock.acquire(dataDir);
  });
  const cleanups: StopStep[] = [stopStep('data-dir lock', () => lock.release())];
  // Each step bounded, the whole stop within STOP_LIMIT_MS (src/node/stop.ts).
  const unwind = async (): Promise<StopReport> => {
    unwinding = true;
    const report = await runStopSteps(cleanups.reverse(), logger);
    if (failedDuringStop.length === 0) return report;
    return { ...report, clean: false, problems: [...report.problems, ...failedDuringStop.map((m) => `failed during the stop: ${m}`)] };
  };
  try {
    const box = await SecretBox.openOrCreate(dataDir);
    const uuid = await nodeUuid(dataDir);
    const clustered = config.queue.kind === 'kafka';
    // Loaded only for a cluster (src/node/cluster-parts.ts).
    const cl = clustered ? await import('./cluster-parts.js') : null;
    // Read first: a secret file that cannot be read stops the node before it does anything.
    const clusterSecret = cl === null ? null : await cl.loadClusterSecret(config.cluster);
    const kafka = kafkaConnection(config);
    const store = clustered
      ? await GlobalStore.openShared(
          new cl!.KafkaGlobalLog({
            connection: kafka,
            topicPrefix: config.kafka.topic_prefix,
            replicationFactor: config.kafka.topic_replication_factor,
            minInsyncReplicas: config.kafka.min_insync_replicas,
            dir: join(dataDir, 'global'),
            timeoutMs: config.kafka.request_timeout_ms * 3,
            logger,
          }),
          { snapshotEvery: config.state.snapshot_every_events, logger: log('global'), proposer: uuid },
        )
      : await GlobalStore.open(new EmbeddedGlobalLog(join(dataDir, 'global')), { snapshotEvery: config.state.snapshot_every_events, logger: log('global') });
    cleanups.push(stopStep('global store', () => store.close()));
    const clusterId = clustered ? await clusterIdOf(store, clock) : null;

    const users = new UserService(store, clock);
    await users.ensureRootUser();
    const repositories = new RepositoryService(store, box, clock);
    const liveness = new LivenessSeam(new SelfLiveness(config.node.id, clock));
    const cluster = new ClusterService(store, liveness, clock);

    // A fresh local admin token at every start; the previous one stops working.
    const adminToken = newApiToken();
    const adminDigest = tokenDigest(adminToken);
    await atomicWriteFile(join(dataDir, LOCAL_ADMIN_TOKEN_FILE), `${adminToken}\n`, 0o600);
    const auth = new Authenticator(
      () => store.state,
      () => adminDigest,
    );

    // Prometheus: levels are read from their owners at scrape time (the closures run only then).
    const prom = config.metrics.enabled
      ? new PrometheusMetrics({
          partitionLag: () => digest.partitionLag(),
          queueBytes: () => queue.sizeBytes(),
          segments: () => {
            const all = catalog.all();
            let bytes = 0;
            let open = 0;
            for (const s of all) {
              bytes += s.bytes;
              if (!s.closed) open++;
            }
            return { count: all.length, bytes, open };
          },
          pools: () => workers.stats(),
          repositoryName: (id) => store.state.repositories.get(id)?.name,
          runningQueries: () => queries.runningCount,
          queryJobs: () => queryJobs.size,
          replication: () => replication?.stats() ?? null,
          clusterAuthFailures: () => clusterAuthFailures?.() ?? null,
        })
      : null;
    metrics = prom ?? noMetrics;

    const latency = new LatencyWindow(clock);
    const runtime = new RuntimeMonitor();
    cleanups.push(stopStep('runtime monitor', () => runtime.stop()));

    // Digest queue, segments, digest. Replay happens here, before the node takes requests.
    // queue.kind: files in the data dir, or the [kafka] cluster's ingest topic (created if missing).
    const { queue, healthCheck: queueHealth } = await openDigestQueue({ config, dataDir, partitions: store.state.partitions.length || config.digest.partitions, logger: log('queue'), onFatal });
    // A Kafka queue closes three librdkafka clients (a consumer's close alone can take ~6 s).
    cleanups.push(stopStep('digest queue', () => queue.close(), clustered ? 8_000 : undefined));
    // Deletions a crash interrupted are finished before the catalog reads the segment files.
    const deletions = await SegmentDeletions.open(join(dataDir, 'segments'), deletionCrashStep());
    // So are segment rewrites (redaction): the old file or the new one stays, never both.
    const rewrites = await SegmentRewrites.open(join(dataDir, 'segments'), rewriteCrashStep());
    const catalog = await SegmentCatalog.load(join(dataDir, 'segments'), log('segments'), clock.now());
    deletions.applyTo(catalog);
    let ownership: DigestOwnership | null = null;
    /** A cluster's segment replication, once the cluster protocol runs. */
    let replication: SegmentReplicator | null = null;
    /** Connections the cluster port refused for want of the secret (once the protocol runs). */
    let clusterAuthFailures: (() => number) | null = null;
    const threads = config.digest.worker_threads;
    const workers = new WorkerPool({
      ...(threads === 0 ? {} : { threads }),
      backgroundNice: config.digest.block_build_nice,
      queryMemory: { perQueryBytes: config.query.max_query_memory_bytes, totalBytes: config.query.max_total_query_memory_bytes },
    });
    cleanups.push(stopStep('worker pools', () => workers.close()));
    const digest = new Digest({
      dataDir,
      queue,
      catalog,
      encoder: workers,
      clock,
      logger: log('digest'),
      settings: {
        segmentsDir: join(dataDir, 'segments'),
        blockTargetBytes: config.digest.block_target_bytes,
        flushBlockMs: config.digest.flush_block_seconds * 1000,
        blocksPerSegment: config.digest.blocks_per_segment,
        maxSegmentOpenMs: config.digest.max_hours_segment_open * 3600_000,
      },
      openBlockBudgetBytes: config.digest.open_block_budget_bytes,
      sealUndigestedAboveBytes: Math.floor(config.ingest.max_undigested_bytes / 2),
      onLatency: (ms) => {
        latency.record(ms);
        metrics.digestLatency(ms);
      },
      onFatal,
      ...(clustered ? { cluster: { onProgress: (p: number, cp: number) => ownership?.noteCheckpoint(p, cp), selfId: config.node.id } } : {}),
    });
    const selfId = config.node.id;
    const owned = (): number[] => cluster.ownedPartitions(selfId);
    const health = new HealthService(
      {
        dataDir,
        secondaryDir: config.health.secondary_data_dir,
        backupDir: config.health.backup_dir,
        gracePeriodMs: config.health.grace_period_seconds * 1000,
        checkIntervalMs: config.health.check_interval_seconds * 1000,
        diskWarnPercent: config.health.disk_warn_percent,
        diskDownPercent: config.health.disk_down_percent,
        latencyWarnSeconds: config.health.event_latency_warn_seconds,
        latencyDownSeconds: config.health.event_latency_down_seconds,
        version: VERSION,
      },
      clock,
      latency,
      () => cluster.notAlive(),
      log('health'),
      () => (store.writeFailure === null ? null : `global state cannot be written: ${store.writeFailure.message}`),
    );
    if (queueHealth !== null) health.addCheck(queueHealth);
    await health.start();
    cleanups.push(stopStep('health', () => health.stop()));

    const ingestCounter = new IngestCounter({ store, nodeId: config.node.id, clock, logger: log('retention'), intervalMs: config.retention.interval_seconds * 1000 });
    const ingest = new IngestService({
      store,
      queue,
      clock,
      maxDatasourcesPerRepository: config.ingest.max_datasources_per_repository,
      maxUndigestedBytes: config.ingest.max_undigested_bytes,
      undigestedBytes: () => digest.undigestedBytes(),
      maxDigestBacklogBytes: config.ingest.max_digest_backlog_bytes,
      digestBacklogBytes: () => digest.pendingBytes(),
      diskProblem: () => health.diskProblem(),
      // A cluster appends to any partition one of whose hosts is alive (its digest owner reads it
      // from Kafka); a lone node to the partitions it digests.
      livePartitions: clustered
        ? () => store.state.partitions.flatMap((hosts, p) => (hosts.some((h) => liveness.isAlive(h)) ? [p] : []))
        : () => owned().filter((p) => digest.owns(p)),
      onCommitted: (repo, events, bytes) => {
        metrics.ingested(repo, events, bytes);
        ingestCounter.count(repo, events, bytes);
      },
    });

    const blobs = new BlobStore(join(dataDir, 'files'));
    await blobs.open();
    const files = new FileService(
      store,
      blobs,
      workers,
      {
        maxFileBytes: config.files.max_file_bytes,
        maxRows: config.files.max_rows,
        maxFilesPerRepository: config.files.max_files_per_repository,
        maxTotalBytes: config.files.max_total_bytes,
        cacheBytes: config.files.cache_bytes,
      },
      clock,
      log('files'),
    );
    // Contents left behind by a crash between writing a file and recording it.
    await blobs.sweep((h) => store.state.files.referenced(h));

    const queryLimits = { maxGroups: config.query.max_groups, maxRows: config.query.max_rows };
    const executor = new QueryExecutor({
      sources: querySources({ selfId: config.node.id, clustered, catalog, store, digest }),
      runner: workers,
      parallelism: workers.size,
      taskBytes: config.query.task_bytes,
      maxQueryMs: config.query.max_query_seconds * 1000,
      memory: new NodeQueryMemory(config.query.max_query_memory_bytes, config.query.max_total_query_memory_bytes),
    });
    // A cluster's live queries read new records straight from Kafka (every partition, whoever digests it).
    // Saved searches are looked up through the service built below (queries only call it at run time).
    let savedQueries: SavedQueryService | null = null;
    const liveTail = clustered
      ? new cl!.KafkaTail({ connection: kafka, topic: cl!.ingestTopic(config.kafka.topic_prefix), partitions: () => store.state.partitions.length, timeoutMs: config.kafka.request_timeout_ms, logger })
      : null;
    // Closing its Kafka consumer can take up to ~6 s (librdkafka's fetch and socket timeouts); it only reads.
    if (liveTail !== null) cleanups.push(stopStep('live tail', () => liveTail.close(), 8_000));
    // Where a live query's historical part ends and its live part begins, per partition (cluster/live-boundary.ts).
    const liveBoundary = clustered ? new cl!.LiveBoundary({ selfId: config.node.id, store, digest, read: (p, from) => queue.read(p, from), runner: workers, logger: log('query') }) : null;
    const queries = new QueryService({
      executor,
      files,
      live: digest,
      ...(liveTail === null || liveBoundary === null ? {} : { boundary: { listen: (l) => liveTail.listen(l), settle: (below) => liveBoundary.settle(below, liveBoundary.epochs()) } }),
      limits: queryLimits,
      maxConcurrent: config.query.max_concurrent,
      scheduling: {
        maxPerUser: config.query.max_concurrent_per_user,
        queueTimeoutMs: config.query.queue_timeout_ms,
        maxQueued: config.query.max_queued,
        largeBytes: config.query.large_query_bytes,
        estimateBytes: (repoId, start, end) => bytesInRange(catalog.forRepository(repoId), start, end),
      },
      now: () => clock.now(),
      dataFiles: { geoip: config.query.geoip_file, asn: config.query.asn_file, ioc: config.query.ioc_file },
      rdns: {
        enabled: config.query.rdns_enabled,
        server: config.query.rdns_server,
        timeoutMs: config.query.rdns_timeout_ms,
        concurrency: config.query.rdns_concurrency,
        perSecond: config.query.rdns_requests_per_second,
        maxLimit: config.query.rdns_max_limit,
        allowTargets: config.alerts.allow_targets,
      },
      savedQueries: (domainId) => savedQueries?.lookup(domainId) ?? (() => undefined),
      onFinished: (run) =>
        metrics.queryFinished(run.spec.ctx.live ? 'live' : 'search', run.error !== null ? 'error' : run.cancelled ? 'cancelled' : 'ok', ((run.finishedAt ?? Date.now()) - run.startedAt) / 1000, run.processedBytes, run.processedEvents),
    });
    savedQueries = new SavedQueryService(store, clock, (domainId, text) => {
      const expanded = expandSavedCalls(text, savedQueries!.lookup(domainId));
      // Parameters get their values from the calls: compiled here with a stand-in for each.
      const args = Object.fromEntries([...expanded.matchAll(/\?\{?\s*([A-Za-z0-9_]+)/g)].map((m) => [m[1]!, '0']));
      queries.compile(queries.spec({ queryString: expanded, start: undefined, end: undefined, isLive: false, timeZoneOffsetMinutes: 0, arguments: args }));
    });
    const queryJobs = new QueryJobRegistry({
      service: queries,
      now: () => clock.now(),
      idleMs: config.query.job_idle_seconds * 1000,
      liveIdleMs: config.query.live_job_idle_seconds * 1000,
      maxJobs: config.query.max_jobs,
      idPrefix: String(selfId),
    });
    cleanups.push(stopStep('query jobs', () => queryJobs.close()));

    // Alerts and actions: definitions in global state; the scheduler starts once the node serves.
    const alertCfg = config.alerts;
    const alerts = new AlertService(store, clock, {
      maxPerRepository: alertCfg.max_alerts_per_repository,
      prepareQuery: async (queryString, queryStart, domain) => {
        // prepare, not spec: the lookup files match()/lookup() name must be loaded to compile.
        const target = domain.view === undefined ? { id: domain.id, name: domain.name } : viewTarget(store.state, domain.view);
        const spec = await queries.prepare({ queryString, start: queryStart, end: undefined, isLive: false, timeZoneOffsetMinutes: 0, arguments: {} }, target);
        return () => void queries.compile(spec);
      },
    });
    const actions = new ActionService(store, box, clock, { maxPerRepository: alertCfg.max_actions_per_repository, smtpConfigured: alertCfg.smtp_host !== '' });
    const ingestLimits = {
      maxEventsPerRequest: config.ingest.max_events_per_request,
      maxEventBytes: config.ingest.max_event_bytes,
      maxFieldsPerEvent: config.ingest.max_fields_per_event,
      maxJsonDepth: config.http.max_json_depth,
    };
    const parsers = new ParserService(
      store,
      clock,
      { maxRequestMs: config.parsers.max_request_ms, maxPerRepository: config.parsers.max_per_repository },
      ingestLimits,
    );
    const listeners = new ListenerService(store, clock, config.listeners.max_listeners);
    const retentionCfg = config.retention;
    const orNull = (v: number): number | null => (v === 0 ? null : v);
    const retention = new RetentionService({
      state: () => store.state,
      onApplied: (l) => store.onApplied(l),
      catalog,
      clustered,
      deletions,
      clock,
      logger,
      disk: () => diskUsage(dataDir),
      raiseBounds: (bounds) => raiseRetentionBounds(store, bounds, clock.now()),
      settings: {
        intervalMs: retentionCfg.interval_seconds * 1000,
        nodeDefault: { timeDays: orNull(retentionCfg.default_time_days), ingestGb: orNull(retentionCfg.default_ingest_gb), storageGb: orNull(retentionCfg.default_storage_gb) },
        diskWatermarkPercent: retentionCfg.disk_watermark_percent,
      },
    });
    const redactions = new RedactionService({
      store,
      catalog,
      rewrites,
      deletions,
      selfId: config.node.id,
      clock,
      logger: log('redaction'),
      intervalMs: retentionCfg.interval_seconds * 1000,
      settleMs: config.digest.flush_block_seconds * 1000 + 2000,
      ...(clustered
        ? {
            holderRole: (seg: SegmentInfo) => {
              const listed = store.state.cluster.segments;
              const entry = listed.segments.get(seg.meta.id);
              if (entry === undefined) return 'rewrite' as const;
              if (listed.superseded(seg.meta.id, () => true)) return 'done' as const;
              const live = holdersOf(entry).filter((n) => n === config.node.id || liveness.isAlive(n));
              return live[0] === config.node.id ? ('rewrite' as const) : ('skip' as const);
            },
          }
        : {}),
    });
    const views = new ViewService(store, clock, (filter) => {
      const compiled = queries.compile(queries.spec({ queryString: filter, start: undefined, end: undefined, isLive: false, timeZoneOffsetMinutes: 0, arguments: {} }));
      if (compiled.isAggregate) throw new LogsvcError('E_VALIDATION', 'a view filter must only filter events (no aggregate function)');
    });
    const ownDisk = (): PeerDisk => {
      const disk = health.primaryDisk();
      return { diskTotal: disk?.totalBytes ?? 0, diskFree: disk?.freeBytes ?? 0, wipBytes: digest.undigestedBytes() };
    };
    // Other nodes' disks, as their last heartbeats said (set once the membership runs).
    let heartbeatPayloadOf: ((nodeId: number) => unknown) | null = null;
    const storage = {
      repositorySizes: (id: string) => retention.repositorySizes(id),
      ingestVolume: (id: string) => store.state.ingestVolume.of(id),
      node: () => ({ segmentBytes: catalog.all().reduce((n, s) => n + s.bytes, 0), ...ownDisk() }),
      peerNode: (nodeId: number) => peerDiskOf(heartbeatPayloadOf?.(nodeId)),
      replication: () => replication?.sizes() ?? null,
    };
    const graphqlServices = { users, groups: new GroupService(store, clock), repositories, cluster, files, parsers, alerts, actions, listeners, storage, views, savedQueries, redactions, selfId: config.node.id, version: VERSION };
    const router = buildRouter({
      auth,
      health,
      cluster,
      users,
      repositories,
      graphql: lazyGraphqlEndpoint({ maxDepth: config.graphql.max_depth, maxFields: config.graphql.max_complexity, logger: log('graphql') }),
      graphqlServices,
      version: VERSION,
      maxJsonDepth: config.http.max_json_depth,
      explorer: config.graphql.explorer,
      store,
      ingest,
      ingestLimits,
      parsers,
      maxDecompressedBytes: config.http.max_decompressed_bytes,
      offloadIngestBytes: config.ingest.offload_bytes,
      workers,
      clock,
      queries,
      queryJobs,
      views,
      files,
      maxFileBytes: config.files.max_file_bytes,
      maxLiveStreams: config.query.max_concurrent,
      alerts,
      actions,
      metrics: (reset) => ({
        ...runtime.read(reset),
        undigestedBytes: digest.undigestedBytes(),
        pendingBlockBytes: digest.pendingBytes(),
        queueBytes: queue.sizeBytes(),
        segments: catalog.all().length,
        eventLatency: latency.summary(),
      }),
      prometheus: prom === null ? null : { render: () => prom.render(), openOnLoopback: config.metrics.open_on_loopback, token: config.metrics.token },
      ui: config.ui.enabled,
      replication: () => (replication === null ? null : { ...replication.stats(), nodes: replication.perNode() }),
    });
    // The partition layout exists once this node is registered; then replay, then serve.
    if (clustered) await cluster.autoLayout(config.digest.partitions, selfId);
    else await cluster.ensureLayout(config.digest.partitions, selfId);
    await queue.ensurePartitions(store.state.partitions.length);
    await digest.start(clustered ? [] : owned());
    cleanups.push(stopStep('digest', () => digest.stop(), 12_000));
    if (clustered) {
      ownership = new cl!.DigestOwnership({ selfId, store, digest, catalog, liveness, clock, logger, intervalMs: 500, graceMs: config.cluster.failure_timeout_ms });
      // Before this node answers any query: void what epochs it lost while away wrote past their end.
      await ownership.fenceAll();
    }
    retention.start();
    cleanups.push(stopStep('retention', () => retention.stop()));
    ingestCounter.start();
    // Stops before retention (cleanups run in reverse), after the HTTP server: the last counts are reported.
    cleanups.push(stopStep('ingest volume', () => ingestCounter.stop()));
    redactions.start();
    cleanups.push(stopStep('redaction', () => redactions.stop()));
    store.onApplied((e) => {
      if (e.type !== 'PartitionLayoutSet') return;
      void (async () => {
        await queue.ensurePartitions(e.partitions.length);
        // A cluster's digest takes partitions through DigestOwnership (epochs), not here.
        if (!clustered) await digest.own(owned());
      })().catch((err: unknown) => onFatal(err as Error));
    });

    const http: HttpServer = await startHttpServer(
      {
        host: config.node.host,
        port: config.node.port,
        maxHeaderBytes: config.http.max_header_bytes,
        maxApiBodyBytes: config.http.max_api_body_bytes,
        maxIngestBodyBytes: config.http.max_body_bytes,
        maxInflightBodyBytes: config.http.max_inflight_body_bytes,
        // The file plus the multipart framing around it.
        maxUploadBodyBytes: config.files.max_file_bytes + MULTIPART_OVERHEAD_BYTES,
        logger: log('http'),
        ...(prom === null ? {} : { onReply: (route: string, method: string, status: number, seconds: number) => prom.httpRequest(route, method, status, seconds) }),
      },
      router,
    );
    cleanups.push(
      stopStep(
        'http (in-flight requests get 5 s)',
        async () => {
          http.close();
          closeQueryStreams();
          await http.drain(5000);
          http.close(true);
        },
        6_000,
      ),
    );
    const url = effectiveExternalUrl(config, http.port);
    await cluster.registerSelf({ id: selfId, uuid, name: config.node.name === '' ? `node-${selfId}` : config.node.name, uri: url });
    if (clustered && cl !== null && ownership !== null && clusterId !== null) {
      const protocol = await cl.startClusterProtocol({
        config,
        selfUuid: uuid,
        clusterId,
        url,
        secret: clusterSecret,
        dataDir,
        store,
        cluster,
        catalog,
        executor,
        files,
        health,
        ownership,
        liveBoundary,
        ownDisk,
        useLiveness: (l) => (liveness.current = l),
        clock,
        logger,
        log,
        cleanups,
      });
      replication = protocol.replication;
      heartbeatPayloadOf = protocol.heartbeatPayloadOf;
      clusterAuthFailures = protocol.authFailures;
    }

    // Ingest listeners (syslog over TCP/UDP): opened from global state, following its changes.
    const listenerManager = new ListenerManager(
      store,
      { ingest, ingestLimits, maxDecompressedBytes: config.http.max_decompressed_bytes, offloadIngestBytes: config.ingest.offload_bytes, workers, parsers, clock },
      {
        maxConnections: config.listeners.max_connections,
        maxMessageBytes: config.listeners.max_message_bytes,
        udpMaxPendingBytes: config.listeners.udp_max_pending_bytes,
        batchLingerMs: config.listeners.batch_linger_ms,
      },
      logger,
      selfId,
    );
    await listenerManager.start();
    cleanups.push(stopStep('ingest listeners', () => listenerManager.stop()));
    // Published whether or not this node runs alerts, so the runner is chosen among nodes that do.
    await publishAlertNode(store, selfId, config.alerts.enabled);

    if (alertCfg.enabled) {
      cleanups.push(startAlerting({ alerts: alertCfg, selfId, baseUrl: url, store, cluster, queries, actions, ingest, ingestLimits, parsers, metrics, clock, logger: log('alerts') }));
    }

    if (selfLogs !== null) {
      // The system repository for the node's own logs; another node may have made it first.
      if (store.state.repositoryByName(SELF_LOG_REPOSITORY) === undefined) {
        await repositories.create({ kind: 'local-admin', isRoot: true }, SELF_LOG_REPOSITORY, "this cluster's own logs", { timeDays: config.self_logs.retention_days, ingestGb: null, storageGb: null }).catch((err: unknown) => {
          if (!(err instanceof LogsvcError && err.code === 'E_CONFLICT')) throw err;
        });
      }
      selfLogs.start({
        repositoryId: () => store.state.repositoryByName(SELF_LOG_REPOSITORY)?.id,
        admit: () => ingest.admit(),
        ingest: (repo, groups, at) => ingest.ingest(repo, groups, at),
      });
      // Runs before the digest and the queue stop (cleanups run in reverse), so the last lines land.
      cleanups.push(stopStep('self logs', () => selfLogs.stop()));
    }
    logger.info('node started', { module: 'node', nodeId: selfId, url, version: VERSION, dataDir });

    if (startedFull > 0 && queue instanceof EmbeddedDigestQueue) queue.space.close(new Error('started on a full disk'), startedFull);
    // Laid after the start, off its path (4 MiB written and synced).
    else void ensureReserve(dataDir).catch((err: unknown) => logger.warn('could not lay the reserve file', { error: (err as Error).message }));
    let stopping: Promise<StopReport> | null = null;
    return {
      url,
      port: http.port,
      dataDir,
      stop() {
        stopping ??= (async () => {
          // From here new queries, query parts and ingest are refused (src/http/stopping-gate.ts).
          health.markStopping();
          return unwind();
        })();
        return stopping;
      },
    };
  } catch (err) {
    await unwind();
    throw err;
  }
}
