/**
 * Resolvers of the data-lifecycle schema (schema-lifecycle.graphql.ts): retention and sizes of
 * repositories, the cluster's size fields, groups and roles (none exist), token rotation, and the
 * declared-but-not-built mutations, which fail with E_NOT_BUILT naming what is missing.
 */
import type { Repository, RetentionSettings, StoredView } from '../global/index.js';
import type { ConnectionInput } from '../views/view-service.js';
import { repositoryShape } from './resolvers.js';
import { LogsvcError } from '../lib/errors.js';
import { requireUser } from '../auth/index.js';
import type { GraphqlContext } from './context.js';

type Args = Record<string, unknown>;
type Resolver = (args: Args, ctx: GraphqlContext) => unknown;

const notBuilt = (what: string): never => {
  throw new LogsvcError('E_NOT_BUILT', `${what} is not built in logsvc (see docs/data-lifecycle.md)`);
};

/** The newer alert kinds: none can be created yet, so every search domain has none. */
function triggerFields(domain: string): Record<string, unknown> {
  const noneWithId = (kind: string) => (a: Args): never => {
    throw new LogsvcError('E_NOT_FOUND', `${kind} "${String(a.id)}" does not exist in "${domain}"`);
  };
  return {
    filterAlerts: [],
    filterAlert: noneWithId('filter alert'),
    aggregateAlerts: [],
    aggregateAlert: noneWithId('aggregate alert'),
    scheduledSearches: [],
    scheduledSearch: noneWithId('scheduled search'),
  };
}

/** A view as the product's View type. */
export function viewShape(v: StoredView, ctx: GraphqlContext) {
  const none = (kind: string) => (a: Args): never => {
    throw new LogsvcError('E_NOT_FOUND', `${kind} "${String(a.id)}" does not exist in view "${v.name}" (alerts and actions belong to repositories)`);
  };
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
    alerts: [],
    alert: none('alert'),
    actions: [],
    action: none('action'),
    ...triggerFields(v.name),
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
    s3ArchivingConfiguration: null,
    ...triggerFields(r.name),
  };
}

/** The cluster's and its nodes' size fields, from this node's segments and disk. */
export function lifecycleClusterFields(ctx: GraphqlContext): Record<string, unknown> {
  const stats = ctx.services.storage.node();
  return {
    // Each segment has one copy (replication is not built), so every byte is "properly" replicated at factor 1.
    clusterInfoAgeSeconds: 0,
    underReplicatedSegmentSize: 0,
    overReplicatedSegmentSize: 0,
    missingSegmentSize: 0,
    properlyReplicatedSegmentSize: stats.segmentBytes,
    targetUnderReplicatedSegmentSize: 0,
    targetOverReplicatedSegmentSize: 0,
    targetMissingSegmentSize: 0,
    targetProperlyReplicatedSegmentSize: stats.segmentBytes,
  };
}

export function lifecycleNodeFields(ctx: GraphqlContext, self: boolean): Record<string, unknown> {
  const stats = self ? ctx.services.storage.node() : { segmentBytes: 0, diskTotal: 0, diskFree: 0, wipBytes: 0 };
  return {
    clusterInfoAgeSeconds: 0,
    inboundSegmentSize: 0,
    outboundSegmentSize: 0,
    canBeSafelyUnregistered: false,
    currentSize: stats.segmentBytes,
    primarySize: stats.segmentBytes,
    secondarySize: 0,
    totalSizeOfPrimary: stats.diskTotal,
    totalSizeOfSecondary: 0,
    freeOnPrimary: stats.diskFree,
    freeOnSecondary: 0,
    wipSize: stats.wipBytes,
    targetSize: stats.segmentBytes,
    solitarySegmentSize: stats.segmentBytes,
    zone: null,
  };
}

export const lifecycleQueryResolvers: Record<string, Resolver> = {
  groupsPage: (a, ctx) => {
    requireUser(ctx.principal, 'listing groups');
    // Groups are not built: the page is truthfully empty.
    return { pageInfo: { number: (a.pageNumber as number) ?? 1, totalNumberOfRows: 0, total: 0 }, page: [] };
  },
  roles: (_a, ctx) => {
    requireUser(ctx.principal, 'listing roles');
    return [];
  },
  role: (a, ctx) => {
    requireUser(ctx.principal, 'reading a role');
    throw new LogsvcError('E_NOT_FOUND', `role "${String(a.roleId)}" does not exist (roles are not built; permissions are repository memberships)`);
  },
};

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
  addUsersToGroup: (a, ctx) => {
    requireUser(ctx.principal, 'adding users to a group');
    throw new LogsvcError('E_NOT_FOUND', `group "${String((a.input as Args).groupId)}" does not exist (groups are not built; add users to repositories with addMember)`);
  },
  removeUsersFromGroup: (a, ctx) => {
    requireUser(ctx.principal, 'removing users from a group');
    throw new LogsvcError('E_NOT_FOUND', `group "${String((a.input as Args).groupId)}" does not exist (groups are not built)`);
  },
  clusterUnregisterNode: () => notBuilt('unregistering a cluster node'),
  createView: async (a, ctx) =>
    viewShape(await ctx.services.views.create(ctx.principal, a.name as string, (a.description as string | null) ?? '', a.connections as ConnectionInput[] | null), ctx),
  updateView: async (a, ctx) => viewShape(await ctx.services.views.update(ctx.principal, a.viewName as string, a.connections as ConnectionInput[]), ctx),
  createFilterAlert: () => notBuilt('filter alerts'),
  deleteFilterAlert: (a) => {
    throw new LogsvcError('E_NOT_FOUND', `filter alert "${String((a.input as Args).id)}" does not exist`);
  },
  createAggregateAlert: () => notBuilt('aggregate alerts'),
  deleteAggregateAlert: (a) => {
    throw new LogsvcError('E_NOT_FOUND', `aggregate alert "${String((a.input as Args).id)}" does not exist`);
  },
  createScheduledSearch: () => notBuilt('scheduled searches'),
  createScheduledSearchV2: () => notBuilt('scheduled searches'),
  deleteScheduledSearch: (a) => {
    throw new LogsvcError('E_NOT_FOUND', `scheduled search "${String((a.input as Args).id)}" does not exist`);
  },
};
