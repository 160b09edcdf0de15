/**
 * Resolvers: translate GraphQL arguments into calls on the domain services and domain objects into
 * the product's GraphQL shapes. No rule lives here; the services own them.
 */
import type { User, Repository } from '../global/index.js';
import { requireUser } from '../auth/index.js';
import { isBuiltInParser } from '../ingest/parsers/index.js';
import { parserShape } from './resolvers-files-parsers.js';
import type { IngestTokenView } from '../repositories/repository-service.js';
import { toWire } from '../cluster/index.js';
import type { GraphqlContext } from './context.js';
import { alertingFields } from './resolvers-alerting.js';
import { lifecycleClusterFields, lifecycleNodeFields, lifecycleRepositoryFields, replicationSizesOnce, viewShape } from './resolvers-lifecycle.js';
import type { RetentionSettings } from '../global/index.js';

type Args = Record<string, unknown>;
type Resolver = (args: Args, ctx: GraphqlContext) => unknown;

interface UserInput {
  username: string;
  isRoot?: boolean | null;
  fullName?: string | null;
  firstName?: string | null;
  lastName?: string | null;
  email?: string | null;
  company?: string | null;
  countryCode?: string | null;
  picture?: string | null;
}

const opt = (v: string | null | undefined): string | undefined => (v === null || v === undefined ? undefined : v);

function userFields(i: UserInput) {
  const joined = [i.firstName, i.lastName].filter((x) => typeof x === 'string' && x !== '').join(' ');
  return {
    username: i.username,
    isRoot: i.isRoot ?? undefined,
    fullName: opt(i.fullName) ?? (joined === '' ? undefined : joined),
    email: opt(i.email),
    company: opt(i.company),
    countryCode: opt(i.countryCode),
    picture: opt(i.picture),
  };
}

export function userShape(u: User) {
  return {
    __typename: 'User',
    id: u.id,
    displayName: u.fullName ?? u.username,
    username: u.username,
    isRoot: u.isRoot,
    fullName: u.fullName ?? null,
    email: u.email ?? null,
    picture: u.picture ?? null,
    company: u.company ?? null,
    countryCode: u.countryCode ?? null,
    createdAt: u.createdAt,
  };
}

function tokenShape(t: IngestTokenView, ctx: GraphqlContext) {
  return {
    name: t.name,
    token: t.token,
    // The parser as `repository { parser }` shows it (a custom parser by its own id), resolved only when asked for.
    parser: () => {
      if (t.parser === null) return null;
      if (isBuiltInParser(t.parser)) return { id: t.parser, name: t.parser, isBuiltIn: true };
      const found = ctx.services.parsers.find(ctx.principal, ctx.services.repositories.get(ctx.principal, t.repositoryName), { name: t.parser });
      return found === null ? { id: t.parser, name: t.parser, isBuiltIn: false } : parserShape(found);
    },
  };
}

export function repositoryShape(r: Repository, ctx: GraphqlContext) {
  return {
    __typename: 'Repository',
    id: r.id,
    name: r.name,
    description: r.description,
    automaticSearch: r.automaticSearch,
    type: 'DEFAULT',
    createdAt: r.createdAt,
    ingestTokens: () => ctx.services.repositories.ingestTokens(ctx.principal, r).map((tok) => tokenShape(tok, ctx)),
    members: () =>
      [...r.members.values()].flatMap((m) => {
        const u = ctx.services.users.byId(m.userId);
        return u === undefined ? [] : [{ user: userShape(u), hasMembershipAdminRights: m.canAdminMembers, hasDeletionRights: m.canDeleteData }];
      }),
    ...alertingFields(r, ctx),
    ...lifecycleRepositoryFields(r, ctx),
  };
}

function viewer(ctx: GraphqlContext) {
  const p = ctx.principal;
  requireUser(p, 'viewer');
  if (p.kind === 'local-admin') {
    return {
      __typename: 'Account',
      id: 'local-admin',
      displayName: 'Local admin token',
      username: 'local-admin',
      isRoot: true,
      fullName: 'Local admin token',
      email: null,
      picture: null,
      company: null,
      countryCode: null,
      createdAt: 0,
    };
  }
  const u = ctx.services.users.byId(p.userId);
  if (u === undefined) throw new Error('the authenticated user no longer exists');
  return { ...userShape(u), __typename: 'Account' };
}

const DAY_MS = 86_400_000;
const GB = 1e9;

/** createRepository's retention arguments (milliseconds, bytes) as the stored days and gigabytes. */
function createRetention(a: Args): RetentionSettings {
  const num = (v: unknown, unit: number): number | null => (typeof v === 'number' ? v / unit : null);
  return { timeDays: num(a.retentionInMillis, DAY_MS), ingestGb: num(a.retentionInIngestSizeBytes, GB), storageGb: num(a.retentionInStorageSizeBytes, GB) };
}

export const queryResolvers: Record<string, Resolver> = {
  accounts: (_a, ctx) => ctx.services.users.list(ctx.principal).map(userShape),
  users: (a, ctx) => ctx.services.users.list(ctx.principal, (a.search as string | null) ?? undefined).map(userShape),
  user: (a, ctx) => {
    const found = ctx.services.users.list(ctx.principal).find((u) => u.id === a.id);
    return found === undefined ? null : userShape(found);
  },
  currentUser: (_a, ctx) => viewer(ctx),
  viewer: (_a, ctx) => viewer(ctx),
  repository: (a, ctx) => repositoryShape(ctx.services.repositories.get(ctx.principal, a.name as string), ctx),
  repositories: (_a, ctx) => {
    requireUser(ctx.principal, 'listing repositories');
    return ctx.services.repositories.list(ctx.principal).map((r) => repositoryShape(r, ctx));
  },
  searchDomain: (a, ctx) => {
    const view = ctx.principal.kind === 'ingest' || !ctx.services.views.isView(a.name as string) ? undefined : ctx.services.views.find(ctx.principal, a.name as string);
    return view === undefined ? repositoryShape(ctx.services.repositories.get(ctx.principal, a.name as string), ctx) : viewShape(view, ctx);
  },
  searchDomains: (_a, ctx) => {
    requireUser(ctx.principal, 'listing search domains');
    const repos = ctx.services.repositories.list(ctx.principal).map((r) => repositoryShape(r, ctx));
    return [...repos, ...ctx.services.views.list(ctx.principal).map((v) => viewShape(v, ctx))];
  },
  cluster: (_a, ctx) => {
    requireUser(ctx.principal, 'reading the cluster');
    const { cluster, version } = ctx.services;
    const sizes = replicationSizesOnce(ctx);
    return {
      nodes: () =>
        cluster.nodes().map((n) => ({
          id: n.id,
          name: n.name,
          uri: n.uri,
          uuid: n.uuid,
          isAvailable: n.isAvailable,
          lastHeartbeat: n.lastHeartbeat ?? n.registeredAt,
          humioVersion: version,
          ...lifecycleNodeFields(ctx, n.id, sizes),
        })),
      ingestPartitions: () => toWire(cluster.layout()).map((e) => ({ id: e.partition, nodeIds: e.hosts })),
      ...lifecycleClusterFields(ctx, sizes),
    };
  },
};

export const mutationResolvers: Record<string, Resolver> = {
  addUser: async (a, ctx) => ({ user: userShape(await ctx.services.users.add(ctx.principal, userFields(a.input as UserInput))), clientMutationId: null }),
  addUserV2: async (a, ctx) => userShape(await ctx.services.users.add(ctx.principal, userFields(a.input as UserInput))),
  updateUser: async (a, ctx) => ({ user: userShape(await ctx.services.users.update(ctx.principal, userFields(a.input as UserInput))), clientMutationId: null }),
  removeUser: async (a, ctx) => ({ user: userShape(await ctx.services.users.remove(ctx.principal, (a.input as { username: string }).username)), clientMutationId: null }),
  rotateUserApiTokenAndGet: (a, ctx) => ctx.services.users.rotateToken(ctx.principal, (a.input as { id: string }).id),

  createRepository: async (a, ctx) => ({
    repository: repositoryShape(await ctx.services.repositories.create(ctx.principal, a.name as string, (a.description as string | null) ?? '', createRetention(a)), ctx),
  }),
  deleteSearchDomain: async (a, ctx) => {
    if (ctx.services.views.isView(a.name as string)) await ctx.services.views.delete(ctx.principal, a.name as string);
    else await ctx.services.repositories.delete(ctx.principal, a.name as string);
    return { result: true };
  },
  updateDescriptionForSearchDomain: async (a, ctx) => {
    await ctx.services.repositories.setDescription(ctx.principal, a.name as string, a.newDescription as string);
    return { result: true };
  },
  addMember: async (a, ctx) => {
    const rights = { canAdminMembers: a.hasMembershipAdminRights === true, canDeleteData: a.hasDeletionRights === true };
    const name = a.searchDomainName as string;
    if (ctx.services.views.isView(name)) await ctx.services.views.setMember(ctx.principal, name, a.username as string, rights);
    else await ctx.services.repositories.setMember(ctx.principal, name, a.username as string, rights);
    return { clientMutationId: null };
  },
  removeMember: async (a, ctx) => {
    const name = a.searchDomainName as string;
    if (ctx.services.views.isView(name)) await ctx.services.views.removeMember(ctx.principal, name, a.username as string);
    else await ctx.services.repositories.removeMember(ctx.principal, name, a.username as string);
    return { clientMutationId: null };
  },

  addIngestTokenV3: async (a, ctx) => {
    const i = a.input as { repositoryName: string; name: string; parser?: string | null };
    return tokenShape(await ctx.services.repositories.addIngestToken(ctx.principal, i.repositoryName, i.name, i.parser ?? null), ctx);
  },
  removeIngestToken: async (a, ctx) => {
    await ctx.services.repositories.removeIngestToken(ctx.principal, a.repositoryName as string, a.name as string);
    return { result: true };
  },
  assignParserToIngestTokenV2: async (a, ctx) => {
    const i = a.input as { repositoryName: string; tokenName: string; parser: string };
    return tokenShape(await ctx.services.repositories.assignParser(ctx.principal, i.repositoryName, i.tokenName, i.parser), ctx);
  },
  unassignIngestToken: async (a, ctx) => {
    await ctx.services.repositories.assignParser(ctx.principal, a.repositoryName as string, a.tokenName as string, null);
    return { result: true };
  },

  updateIngestPartitionScheme: async (a, ctx) => {
    const parts = a.partitions as { id: number; nodeIds: number[] }[];
    await ctx.services.cluster.setLayout(
      ctx.principal,
      parts.map((p) => ({ partition: p.id, hosts: p.nodeIds })),
    );
    return { result: true };
  },
};

