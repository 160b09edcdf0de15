/**
 * Resolvers of the groups-and-roles schema (schema-groups.graphql.ts): arguments to GroupService
 * calls, stored groups and roles to the product's shapes. The rules are GroupService's.
 */
import type { StoredGroup, StoredRole } from '../global/index.js';
import type { AssignedDomain, RoleInput } from '../accounts/group-service.js';
import type { GraphqlContext } from './context.js';
import { repositoryShape, userShape } from './resolvers.js';
import { viewShape } from './resolvers-lifecycle.js';

type Args = Record<string, unknown>;
type Resolver = (args: Args, ctx: GraphqlContext) => unknown;

function users(ids: Iterable<string>, ctx: GraphqlContext) {
  return [...ids].flatMap((id) => {
    const u = ctx.services.users.byId(id);
    return u === undefined ? [] : [userShape(u)];
  });
}

function domainShape(d: AssignedDomain, ctx: GraphqlContext) {
  return d.kind === 'repository' ? repositoryShape(d.domain, ctx) : viewShape(d.domain, ctx);
}

export function groupShape(g: StoredGroup, ctx: GraphqlContext) {
  const groups = ctx.services.groups;
  const roles = (domainId?: string) => groups.rolesOf(g.id, domainId).map(({ domain, role }) => ({ searchDomain: domainShape(domain, ctx), role: roleShape(role, ctx) }));
  return {
    id: g.id,
    displayName: g.displayName,
    lookupName: g.lookupName,
    userCount: g.userIds.size,
    users: () => users(g.userIds, ctx),
    searchDomainCount: () => new Set(groups.rolesOf(g.id).map((r) => r.domain.domain.id)).size,
    roles: () => roles(),
    searchDomainRoles: (a: Args) => roles((a.searchDomainId as string | null | undefined) ?? undefined),
    searchDomainRolesBySearchDomainName: (a: Args) => groups.rolesOf(g.id).filter((r) => r.domain.domain.name === a.searchDomainName).map(({ domain, role }) => ({ searchDomain: domainShape(domain, ctx), role: roleShape(role, ctx) })),
  };
}

export function roleShape(r: StoredRole, ctx: GraphqlContext) {
  const holders = () => ctx.services.groups.groupsWithRole(r.id);
  const userIds = () => new Set(holders().flatMap((g) => [...g.userIds]));
  return {
    id: r.id,
    displayName: r.displayName,
    color: r.color,
    description: r.description,
    viewPermissions: r.viewPermissions,
    systemPermissions: r.systemPermissions,
    organizationPermissions: r.organizationPermissions,
    groupsCount: () => holders().length,
    usersCount: () => userIds().size,
    users: () => users(userIds(), ctx),
    groups: () => holders().map((g) => groupShape(g, ctx)),
  };
}

function roleInput(i: Args): RoleInput {
  return {
    displayName: i.displayName as string,
    viewPermissions: i.viewPermissions as string[],
    systemPermissions: i.systemPermissions as string[] | null | undefined,
    organizationPermissions: i.organizationPermissions as string[] | null | undefined,
    color: i.color as string | null | undefined,
    description: i.description as string | null | undefined,
  };
}

const assignment = (i: Args) => ({ viewId: i.viewId as string, groupId: i.groupId as string, roleId: i.roleId as string });

export const groupQueryResolvers: Record<string, Resolver> = {
  groupsPage: (a, ctx) => {
    const number = a.pageNumber as number;
    const { groups, total } = ctx.services.groups.page(ctx.principal, a.search as string | null | undefined, number, a.pageSize as number);
    return { pageInfo: { number, totalNumberOfRows: total, total: Math.ceil(total / (a.pageSize as number)) }, page: groups.map((g) => groupShape(g, ctx)) };
  },
  group: (a, ctx) => groupShape(ctx.services.groups.group(ctx.principal, a.groupId as string), ctx),
  groupByDisplayName: (a, ctx) => groupShape(ctx.services.groups.groupByName(ctx.principal, a.displayName as string), ctx),
  roles: (_a, ctx) => ctx.services.groups.roles(ctx.principal).map((r) => roleShape(r, ctx)),
  role: (a, ctx) => roleShape(ctx.services.groups.role(ctx.principal, a.roleId as string), ctx),
};

export const groupMutationResolvers: Record<string, Resolver> = {
  addGroup: async (a, ctx) => ({ group: groupShape(await ctx.services.groups.addGroup(ctx.principal, a.displayName as string, a.lookupName as string | null | undefined), ctx) }),
  updateGroup: async (a, ctx) => {
    const i = a.input as Args;
    return { group: groupShape(await ctx.services.groups.updateGroup(ctx.principal, i.groupId as string, { displayName: i.displayName as string | null | undefined, lookupName: i.lookupName as string | null | undefined }), ctx) };
  },
  removeGroup: async (a, ctx) => ({ group: groupShape(await ctx.services.groups.removeGroup(ctx.principal, a.groupId as string), ctx) }),
  addUsersToGroup: async (a, ctx) => {
    const i = a.input as Args;
    return { group: groupShape(await ctx.services.groups.addUsers(ctx.principal, i.groupId as string, i.users as string[]), ctx) };
  },
  removeUsersFromGroup: async (a, ctx) => {
    const i = a.input as Args;
    return { group: groupShape(await ctx.services.groups.removeUsers(ctx.principal, i.groupId as string, i.users as string[]), ctx) };
  },
  createRole: async (a, ctx) => ({ role: roleShape(await ctx.services.groups.createRole(ctx.principal, roleInput(a.input as Args)), ctx) }),
  updateRole: async (a, ctx) => {
    const i = a.input as Args;
    return { role: roleShape(await ctx.services.groups.updateRole(ctx.principal, i.roleId as string, roleInput(i)), ctx) };
  },
  removeRole: async (a, ctx) => {
    await ctx.services.groups.removeRole(ctx.principal, a.roleId as string);
    return { result: true };
  },
  assignRoleToGroup: async (a, ctx) => {
    const i = a.input as Args;
    const { domain, role } = await ctx.services.groups.assignRole(ctx.principal, assignment(i), i.overrideExistingAssignmentsForView !== false);
    return { group: { searchDomain: domainShape(domain, ctx), role: roleShape(role, ctx) } };
  },
  unassignRoleFromGroup: async (a, ctx) => ({ group: groupShape(await ctx.services.groups.unassignRole(ctx.principal, assignment(a.input as Args)), ctx) }),
};
