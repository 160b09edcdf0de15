/**
 * The cluster protocol of a clustered node, started once the node serves HTTP: membership
 * (heartbeats), peer queries and files, segment replication and the digest ownership's start.
 * Loaded through cluster-parts.ts, so a single node never loads it.
 */
import { join } from 'node:path';
import type { NodeConfig } from '../config/index.js';
import type { Clock } from '../lib/clock.js';
import { LogsvcError } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import type { GlobalStore } from '../global/index.js';
import type { ClusterService, Liveness } from '../cluster/cluster-service.js';
import type { DigestOwnership } from '../cluster/digest-ownership.js';
import type { LiveBoundary } from '../cluster/live-boundary.js';
import { Membership, parseAddr } from '../cluster/protocol/membership.js';
import { PeerQueries } from '../cluster/peer-queries.js';
import { servePeerFiles } from '../cluster/peer-files.js';
import { SegmentReplicator } from '../cluster/replication.js';
import { replicationCheck } from '../cluster/replication-health.js';
import type { HealthService } from '../health/index.js';
import type { FileService } from '../files/index.js';
import type { QueryExecutor } from '../query/index.js';
import { fileNamesIn } from '../query/file-refs.js';
import type { SegmentCatalog } from '../segments/catalog.js';
import type { HeartbeatPayload, PeerDisk } from './heartbeat-payload.js';
import { stopStep, type StopStep } from './stop.js';

export interface ClusterStartDeps {
  config: NodeConfig;
  selfUuid: string;
  clusterId: string;
  /** This node's HTTP address, as other nodes and clients reach it. */
  url: string;
  secret: Buffer | null;
  dataDir: string;
  store: GlobalStore;
  cluster: ClusterService;
  catalog: SegmentCatalog;
  executor: QueryExecutor;
  files: FileService;
  health: HealthService;
  ownership: DigestOwnership;
  liveBoundary: LiveBoundary | null;
  /** This node's disk, sent in its heartbeats. */
  ownDisk: () => PeerDisk;
  /** Called with the membership once it runs: from then on it says which nodes are alive. */
  useLiveness: (liveness: Liveness) => void;
  clock: Clock;
  logger: Logger;
  log: (module: string) => Logger;
  /** Stop steps are pushed here in start order (they run in reverse). */
  cleanups: StopStep[];
}

export interface ClusterProtocol {
  replication: SegmentReplicator;
  /** What a node's last heartbeat carried (its disk), or undefined. */
  heartbeatPayloadOf: (nodeId: number) => unknown;
  /** Connections the cluster port refused for want of the secret. */
  authFailures: () => number;
}

export async function startClusterProtocol(d: ClusterStartDeps): Promise<ClusterProtocol> {
  const { config, store, catalog, executor, files, health, cleanups } = d;
  const selfId = config.node.id;
  const listen = parseAddr(config.cluster.listen);
  if (listen === null) throw new LogsvcError('E_CONFIG_INVALID', `cluster.listen: "${config.cluster.listen}" is not a host:port`);
  const membership = new Membership({
    selfId,
    selfUuid: d.selfUuid,
    clusterId: d.clusterId,
    uri: d.url,
    listen,
    ...(config.cluster.advertise === '' ? {} : { advertise: config.cluster.advertise }),
    peers: config.cluster.peers,
    heartbeatIntervalMs: config.cluster.heartbeat_interval_ms,
    failureTimeoutMs: config.cluster.failure_timeout_ms,
    logger: d.logger,
    clock: d.clock,
    secret: d.secret,
    payload: (): HeartbeatPayload => ({ disk: d.ownDisk() }),
  });
  const own = d.ownership;
  membership.on('up', () => own.trigger());
  membership.on('down', () => own.trigger());
  executor.setPeers(
    new PeerQueries({
      selfId,
      rpc: membership,
      store,
      scanLocal: (spec, repo, placement) => executor.scanLocal(spec, repo, placement),
      // A segment rewritten here (redaction) is had through its rewrite.
      hasSegment: (id) => catalog.get(id) !== undefined || catalog.all().some((s) => s.meta.replaces === id),
      withFiles: async (spec, repoId) => {
        const names = fileNamesIn(spec.text, spec.args);
        return names.length === 0 ? spec : { ...spec, files: await files.tablesFor(repoId, names) };
      },
      timeoutMs: config.query.max_query_seconds * 1000,
      logger: d.log('cluster'),
      stopping: () => health.isStopping(),
      ...(d.liveBoundary === null ? {} : { boundary: d.liveBoundary }),
    }),
  );
  files.setRemoteBlobs(servePeerFiles(membership, selfId, (h) => files.localBlob(h), config.files.max_file_bytes, config.query.max_query_seconds * 1000));
  const replicator = new SegmentReplicator({
    selfId,
    store,
    catalog,
    rpc: membership,
    segmentsDir: join(d.dataDir, 'segments'),
    clock: d.clock,
    logger: d.log('replication'),
    factor: config.cluster.segment_replication_factor,
    bytesPerSecond: config.cluster.replication_bytes_per_second,
    parallel: config.cluster.replication_parallel_transfers,
    sendBytesPerSecond: config.cluster.replication_outbound_bytes_per_second,
    sendParallel: config.cluster.replication_outbound_parallel_transfers,
    graceMs: config.cluster.rereplicate_after_seconds * 1000,
    scrubBytesPerSecond: config.cluster.scrub_bytes_per_second,
    scrubIntervalMs: config.cluster.scrub_interval_seconds * 1000,
    intervalMs: 1000,
    transferTimeoutMs: Math.max(30_000, config.cluster.failure_timeout_ms * 2),
    // Not a repository's segment that retention has decided to delete.
    wanted: (s) => {
      const bound = store.state.repositories.get(s.repo)?.retentionBound;
      return bound !== undefined && (bound === null || s.maxTs >= bound);
    },
  });
  own.useReplication(replicator);
  d.cluster.drainCheck = (node) => replicator.heldTooFewWithout(node);
  health.addCheck(() => replicationCheck(replicator.stats()));
  await membership.start();
  cleanups.push(stopStep('cluster membership', () => membership.stop()));
  d.useLiveness(membership);
  membership.on('up', () => replicator.trigger());
  membership.on('down', () => replicator.trigger());
  await d.cluster.autoLayout(config.digest.partitions, selfId);
  replicator.start();
  cleanups.push(stopStep('segment replication', () => replicator.stop()));
  own.start();
  // Runs first at stop: hands the partitions to the next live hosts before the digest stops.
  cleanups.push(stopStep('digest handover', () => own.stop(), 10_000));
  return { replication: replicator, heartbeatPayloadOf: (nodeId) => membership.payloadOf(nodeId), authFailures: () => membership.authFailures };
}
