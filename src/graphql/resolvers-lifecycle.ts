/**
 * Resolvers of the data-lifecycle schema (schema-lifecycle.graphql.ts): retention and sizes of
 * repositories, the cluster's size fields, views, saved searches, token rotation, and the
 * declared-but-not-built mutations, which fail with E_NOT_BUILT naming what is missing.
 */
import type { Repository, RetentionSettings, StoredSavedQuery, StoredView } from '../global/index.js';
import type { SavedQueryInput } from '../saved-queries/saved-query-service.js';
import type { ConnectionInput } from '../views/view-service.js';
import { queryResolvers, repositoryShape } from './resolvers.js';
import type { NodeSizes } from '../cluster/index.js';
import { GRAPHQL_FIELDS, type AlertInput, type AlertView, type FieldNames } from '../alerts/index.js';
import { alertInput, alertingFields, alertShape } from './resolvers-alerting.js';
import { LogsvcError } from '../lib/errors.js';
import { parseRelative } from '../query/time.js';
import type { GraphqlContext } from './context.js';
import { scheduledSearchFields, scheduledSearchMutations } from './resolvers-scheduled.js';

type Args = Record<string, unknown>;
type Resolver = (args: Args, ctx: GraphqlContext) => unknown;

const notBuilt = (what: string): never => {
  throw new LogsvcError('E_NOT_BUILT', `${what} is not built in logsvc (see docs/data-lifecycle.md)`);
};

/** The product's FilterAlert / AggregateAlert shapes over a stored alert of that kind. */
function newAlertShape(v: AlertView, ctx: GraphqlContext): Record<string, unknown> {
  const base = alertShape(v, ctx);
  const a = v.alert;
  return {
    ...base,
    actions: base.actionsV2,
    throttleTimeSeconds: a.kind === 'filter' && a.throttleTimeMillis === 0 ? null : Math.round(a.throttleTimeMillis / 1000),
    lastTriggered: v.lastTriggeredAt,
    searchIntervalSeconds: Math.round((parseRelative(a.queryStart) ?? 0) / 1000),
    queryTimestampType: a.ingestTime === true ? 'IngestTimestamp' : 'EventTimestamp',
    triggerMode: a.triggerMode ?? 'CompleteMode',
  };
}

function savedQueryShape(q: StoredSavedQuery) {
  return { id: q.id, name: q.name, displayName: q.name, description: null, query: { queryString: q.queryString, start: q.start, end: q.end, isLive: q.isLive } };
}

/** The newer alert kinds (filter and aggregate alerts, scheduled searches) and the saved searches of a repository or a view. */
function triggerFields(domain: string, ctx: GraphqlContext): Record<string, unknown> {
  const { alerts, savedQueries } = ctx.services;
  return {
    filterAlerts: () => alerts.list(ctx.principal, domain, 'filter').map((v) => newAlertShape(v, ctx)),
    filterAlert: (a: Args) => newAlertShape(alerts.get(ctx.principal, domain, a.id as string, 'filter'), ctx),
    aggregateAlerts: () => alerts.list(ctx.principal, domain, 'aggregate').map((v) => newAlertShape(v, ctx)),
    aggregateAlert: (a: Args) => newAlertShape(alerts.get(ctx.principal, domain, a.id as string, 'aggregate'), ctx),
    ...scheduledSearchFields(domain, ctx),
    savedQueries: () => savedQueries.list(ctx.principal, domain).map(savedQueryShape),
    savedQuery: (a: Args) => savedQueryShape(savedQueries.get(ctx.principal, domain, a.id as string)),
  };
}

/** Field names as the product's filter / aggregate alert inputs spell them (for error messages). */
const FILTER_FIELDS: FieldNames = { ...GRAPHQL_FIELDS, queryStart: 'queryString', throttleTimeMillis: 'throttleTimeSeconds', actions: 'actionIdsOrNames' };
const AGGREGATE_FIELDS: FieldNames = { ...FILTER_FIELDS, queryStart: 'searchIntervalSeconds' };
/** A filter alert searches events with timestamps up to this far back (its ingest-time window picks the new ones). */
const FILTER_ALERT_SEARCH = '1h';

function newAlertInput(i: Args, queryStart: unknown): AlertInput {
  const secs = i.throttleTimeSeconds;
  const throttleTimeMillis = typeof secs === 'number' ? secs * 1000 : secs === null || secs === undefined ? 0 : secs;
  return alertInput({ ...i, queryStart, throttleTimeMillis, actions: i.actionIdsOrNames });
}

function searchInterval(v: unknown): string {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new LogsvcError('E_VALIDATION', `searchIntervalSeconds: must be a positive whole number of seconds (got ${String(v)})`);
  return `${v}s`;
}

/** A view as the product's View type. */
export function viewShape(v: StoredView, ctx: GraphqlContext) {
  return {
    __typename: 'View',
    id: v.id,
    name: v.name,
    description: v.description,
    automaticSearch: true,
    connections: () =>
      v.connections.flatMap((c) => {
        const r = ctx.services.views.repository(c.repositoryId);
        return r === undefined ? [] : [{ repository: repositoryShape(r, ctx), filter: c.filter }];
      }),
    files: [],
    ...alertingFields(v, ctx),
    ...triggerFields(v.name, ctx),
  };
}

/** Repository fields of this part of the schema. */
export function lifecycleRepositoryFields(r: Repository, ctx: GraphqlContext): Record<string, unknown> {
  return {
    timeBasedRetention: r.retention.timeDays,
    ingestSizeBasedRetention: r.retention.ingestGb,
    storageSizeBasedRetention: r.retention.storageGb,
    compressedByteSize: () => ctx.services.storage.repositorySizes(r.id).compressed,
    uncompressedByteSize: () => ctx.services.storage.repositorySizes(r.id).uncompressed,
    ingestVolumeByDay: () =>
      ctx.services.storage.ingestVolume(r.id).map((d) => ({ date: new Date(d.day * 86_400_000).toISOString().slice(0, 10), ingestBytes: d.bytes, eventCount: d.events })),
    s3ArchivingConfiguration: null,
    ...triggerFields(r.name, ctx),
  };
}

type ReplicationSizes = NonNullable<ReturnType<NonNullable<GraphqlContext['services']['storage']['replication']>>>;

/** The replication sizes of one answer, counted once and only if a size field is asked for. */
export function replicationSizesOnce(ctx: GraphqlContext): () => ReplicationSizes | null {
  let memo: ReplicationSizes | null | undefined;
  return () => (memo === undefined ? (memo = ctx.services.storage.replication?.() ?? null) : memo);
}

/**
 * The cluster's size fields. A cluster counts every listed segment by its live holders against the
 * replication factor (and, for the target sizes, by its desired holders), as this node sees
 * liveness (replication-sizes.ts). A single node holds each segment once, which is its factor.
 */
export function lifecycleClusterFields(ctx: GraphqlContext, sizes: () => ReplicationSizes | null): Record<string, unknown> {
  // Thunks: a query that asks for none of them (cluster { nodes { id } }) counts nothing.
  const size = (of: (r: ReplicationSizes['cluster']) => number, single: 'all' | 'none') => (): number => {
    const r = sizes();
    if (r !== null) return of(r.cluster);
    return single === 'all' ? ctx.services.storage.node().segmentBytes : 0;
  };
  return {
    clusterInfoAgeSeconds: 0,
    underReplicatedSegmentSize: size((c) => c.live.under.bytes, 'none'),
    overReplicatedSegmentSize: size((c) => c.live.over.bytes, 'none'),
    missingSegmentSize: size((c) => c.live.missing.bytes, 'none'),
    properlyReplicatedSegmentSize: size((c) => c.live.properly.bytes, 'all'),
    targetUnderReplicatedSegmentSize: size((c) => c.target.under.bytes, 'none'),
    targetOverReplicatedSegmentSize: size((c) => c.target.over.bytes, 'none'),
    targetMissingSegmentSize: size((c) => c.target.missing.bytes, 'none'),
    targetProperlyReplicatedSegmentSize: size((c) => c.target.properly.bytes, 'all'),
  };
}

const NO_DISK = { segmentBytes: 0, diskTotal: 0, diskFree: 0, wipBytes: 0 };

/**
 * A node's size fields (thunks, counted only when asked). Sizes of segments come from global state
 * in a cluster (what each node is listed as holding: the same answer on every node), from the
 * catalog on a single node; disk and work-in-progress sizes are the answering node's own, and the
 * other nodes' as their last heartbeats said (0 for a node not heard from).
 */
export function lifecycleNodeFields(ctx: GraphqlContext, nodeId: number, sizes: () => ReplicationSizes | null): Record<string, unknown> {
  const self = nodeId === ctx.services.selfId;
  let memo: ReturnType<GraphqlContext['services']['storage']['node']> | undefined;
  const peer = (): ReturnType<GraphqlContext['services']['storage']['node']> => {
    const d = ctx.services.storage.peerNode?.(nodeId) ?? null;
    return d === null ? NO_DISK : { segmentBytes: 0, ...d };
  };
  const disk = () => (memo ??= self ? ctx.services.storage.node() : peer());
  const held = <T>(of: (n: NodeSizes | undefined) => T, single: () => T) => (): T => {
    const r = sizes();
    // A single node holds every segment alone; it cannot leave (it hosts every partition).
    return r === null ? single() : of(r.nodes.find((x) => x.node === nodeId));
  };
  const all = (): number => disk().segmentBytes;
  return {
    clusterInfoAgeSeconds: 0,
    inboundSegmentSize: held((n) => n?.inboundBytes ?? 0, () => 0),
    outboundSegmentSize: held((n) => n?.outboundBytes ?? 0, () => 0),
    canBeSafelyUnregistered: held((n) => n?.canBeSafelyUnregistered ?? false, () => false),
    currentSize: held((n) => n?.bytes ?? 0, all),
    primarySize: held((n) => n?.bytes ?? 0, all),
    secondarySize: 0,
    totalSizeOfPrimary: () => disk().diskTotal,
    totalSizeOfSecondary: 0,
    freeOnPrimary: () => disk().diskFree,
    freeOnSecondary: 0,
    wipSize: () => disk().wipBytes,
    targetSize: held((n) => n?.targetBytes ?? 0, all),
    solitarySegmentSize: held((n) => n?.solitaryBytes ?? 0, all),
    zone: null,
  };
}

function retentionChange(a: Args): Partial<RetentionSettings> {
  const change: Partial<RetentionSettings> = {};
  // graphql-js leaves an argument out of `a` when the client did not send it; null means "remove".
  if ('timeBasedRetention' in a) change.timeDays = a.timeBasedRetention as number | null;
  if ('ingestSizeBasedRetention' in a) change.ingestGb = a.ingestSizeBasedRetention as number | null;
  if ('storageSizeBasedRetention' in a) change.storageGb = a.storageSizeBasedRetention as number | null;
  return change;
}

export const lifecycleMutationResolvers: Record<string, Resolver> = {
  updateRetention: async (a, ctx) => {
    const r = await ctx.services.repositories.setRetention(ctx.principal, a.repositoryName as string, retentionChange(a));
    return { repository: { __typename: 'Repository', id: r.id, name: r.name, description: r.description, automaticSearch: r.automaticSearch } };
  },
  setAutomaticSearching: async (a, ctx) => {
    await ctx.services.repositories.setAutomaticSearch(ctx.principal, a.name as string, a.automaticSearch as boolean);
    return { automaticSearch: a.automaticSearch };
  },
  s3EnableArchiving: () => notBuilt('S3 archiving'),
  s3DisableArchiving: () => notBuilt('S3 archiving'),
  s3ConfigureArchiving: () => notBuilt('S3 archiving'),
  rotateToken: (a, ctx) => ctx.services.users.rotateToken(ctx.principal, (a.input as { id: string }).id),
  clusterUnregisterNode: async (a, ctx) => {
    await ctx.services.cluster.unregisterNode(ctx.principal, Number(a.nodeID), a.force === true);
    return { cluster: (queryResolvers.cluster as Resolver)({}, ctx) };
  },
  createView: async (a, ctx) =>
    viewShape(await ctx.services.views.create(ctx.principal, a.name as string, (a.description as string | null) ?? '', a.connections as ConnectionInput[] | null), ctx),
  updateView: async (a, ctx) => viewShape(await ctx.services.views.update(ctx.principal, a.viewName as string, a.connections as ConnectionInput[]), ctx),
  createSavedQuery: async (a, ctx) => {
    const i = a.input as Args & SavedQueryInput;
    return { savedQuery: savedQueryShape(await ctx.services.savedQueries.create(ctx.principal, i.viewName as string, i)) };
  },
  updateSavedQuery: async (a, ctx) => {
    const i = a.input as Args & SavedQueryInput;
    return { savedQuery: savedQueryShape(await ctx.services.savedQueries.update(ctx.principal, i.viewName as string, i.id as string, i)) };
  },
  deleteSavedQuery: async (a, ctx) => {
    const i = a.input as Args;
    await ctx.services.savedQueries.delete(ctx.principal, i.viewName as string, i.id as string);
    return { result: true };
  },
  createFilterAlert: async (a, ctx) => {
    const i = a.input as Args;
    return newAlertShape(await ctx.services.alerts.create(ctx.principal, i.viewName as string, newAlertInput(i, FILTER_ALERT_SEARCH), FILTER_FIELDS, { kind: 'filter' }), ctx);
  },
  deleteFilterAlert: async (a, ctx) => {
    const i = a.input as Args;
    await ctx.services.alerts.delete(ctx.principal, i.viewName as string, i.id as string, 'filter');
    return true;
  },
  createAggregateAlert: async (a, ctx) => {
    const i = a.input as Args;
    const queryStart = searchInterval(i.searchIntervalSeconds);
    const triggerMode: 'CompleteMode' | 'ImmediateMode' = i.triggerMode === 'ImmediateMode' ? 'ImmediateMode' : 'CompleteMode';
    const kind = { kind: 'aggregate' as const, triggerMode, ...(i.queryTimestampType === 'IngestTimestamp' ? { ingestTime: true } : {}) };
    return newAlertShape(await ctx.services.alerts.create(ctx.principal, i.viewName as string, newAlertInput(i, queryStart), AGGREGATE_FIELDS, kind), ctx);
  },
  deleteAggregateAlert: async (a, ctx) => {
    const i = a.input as Args;
    await ctx.services.alerts.delete(ctx.principal, i.viewName as string, i.id as string, 'aggregate');
    return true;
  },
  ...scheduledSearchMutations,
};
