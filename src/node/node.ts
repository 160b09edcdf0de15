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
import { createLogger, type Logger } from '../lib/logger.js';
import { VERSION } from '../lib/version.js';
import { RuntimeMonitor } from '../lib/runtime-metrics.js';
import { atomicWriteFile, DataDirLock, diskUsage, ensureDir } from '../storage/index.js';
import { EmbeddedGlobalLog, GlobalStore } from '../global/index.js';
import { Authenticator, newApiToken, SecretBox, tokenDigest } from '../auth/index.js';
import { UserService } from '../accounts/user-service.js';
import { RepositoryService } from '../repositories/repository-service.js';
import { ClusterService, SelfLiveness } from '../cluster/index.js';
import { HealthService } from '../health/index.js';
import { createGraphqlEndpoint } from '../graphql/index.js';
import { buildRouter, closeQueryStreams, startHttpServer, type HttpServer } from '../http/index.js';
import { EmbeddedDigestQueue } from '../queue/index.js';
import { SegmentCatalog } from '../segments/catalog.js';
import { SegmentDeletions } from '../segments/deletions.js';
import { RetentionService } from '../retention/index.js';
import { ViewService } from '../views/view-service.js';
import { SavedQueryService } from '../saved-queries/saved-query-service.js';
import { expandSavedCalls } from '../query/saved-calls.js';
import { Digest } from '../digest/index.js';
import { WorkerPool } from '../workers/pool.js';
import { IngestService } from '../ingest/index.js';
import { CustomParsers } from '../ingest/custom-parsing.js';
import { QueryExecutor, QueryJobRegistry, QueryService } from '../query/index.js';
import { BlobStore, FileService } from '../files/index.js';
import { ParserService } from '../parsers/index.js';
import { ActionDispatcher, ActionService, AlertScheduler, AlertService, isAlertRunner, OutboundHttp, publishAlertNode, SmtpMailer, TargetPolicy } from '../alerts/index.js';

export const LOCAL_ADMIN_TOKEN_FILE = 'local-admin-token.txt';
const NODE_UUID_FILE = 'cluster_membership.uuid';
/** Room for multipart boundaries, part headers and small form fields around an uploaded file. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

export interface RunningNode {
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  stop(): Promise<void>;
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
  const logger = opts.logger ?? createLogger(config.node.log_level);
  let fatal: Error | null = null;
  const onFatal = (err: Error): void => {
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
  const lock = await DataDirLock.acquire(dataDir);
  const cleanups: (() => Promise<void> | void)[] = [() => lock.release()];
  const unwind = async (): Promise<void> => {
    for (const c of cleanups.reverse()) await c();
  };
  try {
    const box = await SecretBox.openOrCreate(dataDir);
    const uuid = await nodeUuid(dataDir);
    const store = await GlobalStore.open(new EmbeddedGlobalLog(join(dataDir, 'global')), { snapshotEvery: config.state.snapshot_every_events, logger });
    cleanups.push(() => store.close());

    const users = new UserService(store, clock);
    await users.ensureRootUser();
    const repositories = new RepositoryService(store, box, clock);
    const cluster = new ClusterService(store, new SelfLiveness(config.node.id, clock), clock);

    // A fresh local admin token at every start; the previous one stops working.
    const adminToken = newApiToken();
    const adminDigest = tokenDigest(adminToken);
    await atomicWriteFile(join(dataDir, LOCAL_ADMIN_TOKEN_FILE), `${adminToken}\n`, 0o600);
    const auth = new Authenticator(
      () => store.state,
      () => adminDigest,
    );

    const latency = new LatencyWindow(clock);
    const runtime = new RuntimeMonitor();
    cleanups.push(() => runtime.stop());

    // Digest queue, segments, digest. Replay happens here, before the node takes requests.
    const queue = await EmbeddedDigestQueue.open({ dir: join(dataDir, 'queue'), partitions: store.state.partitions.length || config.digest.partitions, logger, onFatal });
    cleanups.push(() => queue.close());
    // Deletions a crash interrupted are finished before the catalog reads the segment files.
    const deletions = await SegmentDeletions.open(join(dataDir, 'segments'));
    const catalog = await SegmentCatalog.load(join(dataDir, 'segments'), logger, clock.now());
    deletions.applyTo(catalog);
    const threads = config.digest.worker_threads;
    const workers = new WorkerPool({ ...(threads === 0 ? {} : { threads }), backgroundNice: config.digest.block_build_nice });
    cleanups.push(() => workers.close());
    const digest = new Digest({
      dataDir,
      queue,
      catalog,
      encoder: workers,
      clock,
      logger,
      settings: {
        segmentsDir: join(dataDir, 'segments'),
        blockTargetBytes: config.digest.block_target_bytes,
        flushBlockMs: config.digest.flush_block_seconds * 1000,
        blocksPerSegment: config.digest.blocks_per_segment,
        maxSegmentOpenMs: config.digest.max_hours_segment_open * 3600_000,
      },
      openBlockBudgetBytes: config.digest.open_block_budget_bytes,
      sealUndigestedAboveBytes: Math.floor(config.ingest.max_undigested_bytes / 2),
      onLatency: (ms) => latency.record(ms),
      onFatal,
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
      logger,
      () => (store.writeFailure === null ? null : `global state cannot be written: ${store.writeFailure.message}`),
    );
    await health.start();
    cleanups.push(() => health.stop());

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
      livePartitions: () => owned().filter((p) => digest.owns(p)),
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
      logger,
    );
    // Contents left behind by a crash between writing a file and recording it.
    await blobs.sweep((h) => store.state.files.referenced(h));

    const queryLimits = { maxGroups: config.query.max_groups, maxRows: config.query.max_rows };
    const executor = new QueryExecutor({
      sources: {
        segments: (repoId) => catalog.forRepository(repoId),
        memory: (repoId) => digest.memory(repoId),
        highWater: (partition, ds) => catalog.highWater(partition, ds),
        pin: (paths) => catalog.pin(paths),
      },
      runner: workers,
      parallelism: workers.size,
      taskBytes: config.query.task_bytes,
      maxQueryMs: config.query.max_query_seconds * 1000,
    });
    // Saved searches are looked up through the service built below (queries only call it at run time).
    let savedQueries: SavedQueryService | null = null;
    const queries = new QueryService({
      executor,
      files,
      live: digest,
      limits: queryLimits,
      maxConcurrent: config.query.max_concurrent,
      now: () => clock.now(),
      savedQueries: (domainId) => savedQueries?.lookup(domainId) ?? (() => undefined),
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
    cleanups.push(() => queryJobs.close());

    // Alerts and actions: definitions in global state; the scheduler starts once the node serves.
    const alertCfg = config.alerts;
    const alerts = new AlertService(store, clock, {
      maxPerRepository: alertCfg.max_alerts_per_repository,
      prepareQuery: async (queryString, queryStart, repo) => {
        // prepare, not spec: the lookup files match()/lookup() name must be loaded to compile.
        const spec = await queries.prepare({ queryString, start: queryStart, end: undefined, isLive: false, timeZoneOffsetMinutes: 0, arguments: {} }, repo);
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
    const retentionCfg = config.retention;
    const orNull = (v: number): number | null => (v === 0 ? null : v);
    const retention = new RetentionService({
      state: () => store.state,
      onApplied: (l) => store.onApplied(l),
      catalog,
      deletions,
      clock,
      logger,
      disk: () => diskUsage(dataDir),
      settings: {
        intervalMs: retentionCfg.interval_seconds * 1000,
        nodeDefault: { timeDays: orNull(retentionCfg.default_time_days), ingestGb: orNull(retentionCfg.default_ingest_gb), storageGb: orNull(retentionCfg.default_storage_gb) },
        diskWatermarkPercent: retentionCfg.disk_watermark_percent,
      },
    });
    const views = new ViewService(store, clock, (filter) => {
      const compiled = queries.compile(queries.spec({ queryString: filter, start: undefined, end: undefined, isLive: false, timeZoneOffsetMinutes: 0, arguments: {} }));
      if (compiled.isAggregate) throw new LogsvcError('E_VALIDATION', 'a view filter must only filter events (no aggregate function)');
    });
    const storage = {
      repositorySizes: (id: string) => retention.repositorySizes(id),
      node: () => {
        const disk = health.primaryDisk();
        return {
          segmentBytes: catalog.all().reduce((n, s) => n + s.bytes, 0),
          diskTotal: disk?.totalBytes ?? 0,
          diskFree: disk?.freeBytes ?? 0,
          wipBytes: digest.undigestedBytes(),
        };
      },
    };
    const graphqlServices = { users, repositories, cluster, files, parsers, alerts, actions, storage, views, savedQueries, selfId: config.node.id, version: VERSION };
    const router = buildRouter({
      auth,
      health,
      cluster,
      users,
      repositories,
      graphql: createGraphqlEndpoint({ maxDepth: config.graphql.max_depth, maxFields: config.graphql.max_complexity, logger }),
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
    });
    // The partition layout exists once this node is registered; then replay, then serve.
    await cluster.ensureLayout(config.digest.partitions, selfId);
    await queue.ensurePartitions(store.state.partitions.length);
    await digest.start(owned());
    cleanups.push(() => digest.stop());
    retention.start();
    cleanups.push(() => retention.stop());
    store.onApplied((e) => {
      if (e.type !== 'PartitionLayoutSet') return;
      void (async () => {
        await queue.ensurePartitions(e.partitions.length);
        await digest.own(owned());
      })().catch((err: unknown) => onFatal(err as Error));
    });

    const http: HttpServer = await startHttpServer(
      {
        host: config.node.host,
        port: config.node.port,
        maxHeaderBytes: config.http.max_header_bytes,
        maxApiBodyBytes: config.http.max_api_body_bytes,
        maxIngestBodyBytes: config.http.max_body_bytes,
        // The file plus the multipart framing around it.
        maxUploadBodyBytes: config.files.max_file_bytes + MULTIPART_OVERHEAD_BYTES,
        logger,
      },
      router,
    );
    cleanups.push(async () => {
      http.close();
      closeQueryStreams();
      await http.drain(5000);
      http.close(true);
    });
    const url = effectiveExternalUrl(config, http.port);
    await cluster.registerSelf({ id: selfId, uuid, name: config.node.name === '' ? `node-${selfId}` : config.node.name, uri: url });
    // Published whether or not this node runs alerts, so the runner is chosen among nodes that do.
    await publishAlertNode(store, selfId, config.alerts.enabled);

    if (alertCfg.enabled) {
      const outbound = new OutboundHttp(new TargetPolicy(alertCfg.allow_targets), alertCfg.max_response_bytes);
      const mailer =
        alertCfg.smtp_host === ''
          ? null
          : new SmtpMailer({
              host: alertCfg.smtp_host,
              port: alertCfg.smtp_port,
              secure: alertCfg.smtp_secure,
              username: alertCfg.smtp_username,
              password: alertCfg.smtp_password,
              sender: alertCfg.smtp_sender,
              timeoutMs: alertCfg.action_timeout_ms,
            });
      const scheduler = new AlertScheduler({
        store,
        queries,
        openAction: (a) => actions.open(a),
        dispatcher: new ActionDispatcher({
          http: outbound,
          mailer,
          state: () => store.state,
          reingest: { admit: () => ingest.admit(), ingest: (repoId, groups, at) => ingest.ingest(repoId, groups, at) },
          ingestLimits,
          customParsers: (repositoryId, parser) => {
            // A token's parser: a list of at most one definition (the shared set is only for untyped unstructured ingest).
            const defs = parsers.defsForIngest(repositoryId, parser, 'raw');
            return !Array.isArray(defs) || defs.length === 0 ? undefined : new CustomParsers(defs, parsers.timeLimits, ingestLimits);
          },
          clock,
          pagerDutyUrl: alertCfg.pagerduty_url,
          maxMessageBytes: alertCfg.max_message_bytes,
        }),
        clock,
        logger,
        baseUrl: url,
        // The lowest-numbered live node that runs alerts, so a cluster evaluates each alert once.
        isRunner: () => isAlertRunner(selfId, cluster.nodes(), store.state.alerting),
        settings: {
          intervalMs: alertCfg.evaluate_interval_ms,
          maxConcurrent: alertCfg.max_concurrent_evaluations,
          maxConcurrentDeliveries: alertCfg.max_concurrent_deliveries,
          queryTimeoutMs: alertCfg.query_timeout_ms,
          maxMessageEvents: alertCfg.max_message_events,
          retry: { retries: alertCfg.action_retries, backoffMs: alertCfg.retry_backoff_ms, timeoutMs: alertCfg.action_timeout_ms },
        },
      });
      scheduler.start();
      cleanups.push(async () => {
        await scheduler.stop();
        await outbound.close();
      });
    }

    let stopping: Promise<void> | null = null;
    return {
      url,
      port: http.port,
      dataDir,
      stop() {
        stopping ??= (async () => {
          health.markStopping();
          await unwind();
        })();
        return stopping;
      },
    };
  } catch (err) {
    await unwind();
    throw err;
  }
}
