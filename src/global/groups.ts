/**
 * Groups and roles in global state, as the product has them: a group is a named set of users; a
 * role is a named set of permissions; a group is given a role for a search domain (a repository or
 * a view), and every user of the group then has the role's view permissions there. What those
 * permissions let a user do is decided in src/auth/permissions.ts; this index only answers "which
 * permissions does user U have on domain D through groups", from indexes kept as events apply.
 */

export interface StoredGroup {
  id: string;
  displayName: string;
  /** The name an external identity provider knows the group by (stored and shown). */
  lookupName: string | null;
  userIds: Set<string>;
  createdAt: number;
}

export interface StoredRole {
  id: string;
  displayName: string;
  color: string | null;
  description: string | null;
  /** Permissions on the search domains the role is assigned for (the product's `Permission` enum). */
  viewPermissions: string[];
  /** Stored and shown; logsvc has no system or organization role assignment (docs/data-lifecycle.md). */
  systemPermissions: string[];
  organizationPermissions: string[];
  createdAt: number;
}

/** Group `groupId` has role `roleId` on search domain `domainId` (a repository's or a view's id). */
export interface RoleAssignment {
  groupId: string;
  domainId: string;
  roleId: string;
}

export type GroupEvent =
  | { type: 'GroupSaved'; id: string; displayName: string; lookupName: string | null; at: number }
  | { type: 'GroupDeleted'; id: string }
  | { type: 'GroupUsersAdded'; groupId: string; userIds: string[] }
  | { type: 'GroupUsersRemoved'; groupId: string; userIds: string[] }
  | { type: 'RoleSaved'; role: Omit<StoredRole, 'createdAt'>; at: number }
  /** The role goes, and with it every assignment of it. */
  | { type: 'RoleDeleted'; id: string }
  /**
   * Group `groupId` gets role `roleId` on `domainId`; `replace`: the group's other roles on that
   * domain go (the product's overrideExistingAssignmentsForView, its default).
   */
  | { type: 'GroupRoleAssigned'; groupId: string; domainId: string; roleId: string; replace: boolean }
  | { type: 'GroupRoleUnassigned'; groupId: string; domainId: string; roleId: string };

export interface GroupsSnapshot {
  groups: { id: string; displayName: string; lookupName: string | null; userIds: string[]; createdAt: number }[];
  roles: StoredRole[];
  assignments: RoleAssignment[];
}

const NONE: ReadonlySet<string> = new Set();

export class GroupIndex {
  readonly groups = new Map<string, StoredGroup>();
  readonly roles = new Map<string, StoredRole>();
  /** groupId -> domainId -> role ids. */
  private readonly assigned = new Map<string, Map<string, Set<string>>>();
  /** userId -> the groups it is in. */
  private readonly groupsOfUser = new Map<string, Set<string>>();

  groupByName(displayName: string): StoredGroup | undefined {
    for (const g of this.groups.values()) if (g.displayName === displayName) return g;
    return undefined;
  }

  roleByName(displayName: string): StoredRole | undefined {
    for (const r of this.roles.values()) if (r.displayName === displayName) return r;
    return undefined;
  }

  /** The groups user `userId` is in. */
  groupsOf(userId: string): StoredGroup[] {
    return [...(this.groupsOfUser.get(userId) ?? [])].flatMap((id) => {
      const g = this.groups.get(id);
      return g === undefined ? [] : [g];
    });
  }

  /** Every assignment of group `groupId` (all groups when omitted), in a stable order. */
  assignments(groupId?: string): RoleAssignment[] {
    const out: RoleAssignment[] = [];
    for (const [g, byDomain] of this.assigned) {
      if (groupId !== undefined && g !== groupId) continue;
      for (const [domainId, roles] of byDomain) for (const roleId of roles) out.push({ groupId: g, domainId, roleId });
    }
    return out;
  }

  /** The view permissions user `userId` has on domain `domainId` through the groups it is in. */
  permissions(userId: string, domainId: string): ReadonlySet<string> {
    const groups = this.groupsOfUser.get(userId);
    if (groups === undefined) return NONE;
    let out: Set<string> | null = null;
    for (const g of groups) {
      const roles = this.assigned.get(g)?.get(domainId);
      if (roles === undefined) continue;
      for (const r of roles) {
        const role = this.roles.get(r);
        if (role === undefined) continue;
        out ??= new Set();
        for (const p of role.viewPermissions) out.add(p);
      }
    }
    return out ?? NONE;
  }

  apply(e: GroupEvent): void {
    switch (e.type) {
      case 'GroupSaved': {
        const old = this.groups.get(e.id);
        this.groups.set(e.id, { id: e.id, displayName: e.displayName, lookupName: e.lookupName, userIds: old?.userIds ?? new Set(), createdAt: old?.createdAt ?? e.at });
        return;
      }
      case 'GroupDeleted': {
        const g = this.groups.get(e.id);
        if (g === undefined) return;
        for (const u of g.userIds) this.groupsOfUser.get(u)?.delete(e.id);
        this.groups.delete(e.id);
        this.assigned.delete(e.id);
        return;
      }
      case 'GroupUsersAdded': {
        const g = this.groups.get(e.groupId);
        if (g === undefined) return;
        for (const u of e.userIds) {
          g.userIds.add(u);
          let of = this.groupsOfUser.get(u);
          if (of === undefined) this.groupsOfUser.set(u, (of = new Set()));
          of.add(g.id);
        }
        return;
      }
      case 'GroupUsersRemoved': {
        const g = this.groups.get(e.groupId);
        if (g === undefined) return;
        for (const u of e.userIds) {
          g.userIds.delete(u);
          this.groupsOfUser.get(u)?.delete(g.id);
        }
        return;
      }
      case 'RoleSaved': {
        const old = this.roles.get(e.role.id);
        this.roles.set(e.role.id, { ...e.role, viewPermissions: [...e.role.viewPermissions], systemPermissions: [...e.role.systemPermissions], organizationPermissions: [...e.role.organizationPermissions], createdAt: old?.createdAt ?? e.at });
        return;
      }
      case 'RoleDeleted':
        this.roles.delete(e.id);
        for (const byDomain of this.assigned.values()) for (const roles of byDomain.values()) roles.delete(e.id);
        return;
      case 'GroupRoleAssigned': {
        if (!this.groups.has(e.groupId) || !this.roles.has(e.roleId)) return;
        let byDomain = this.assigned.get(e.groupId);
        if (byDomain === undefined) this.assigned.set(e.groupId, (byDomain = new Map()));
        let roles = byDomain.get(e.domainId);
        if (roles === undefined || e.replace) byDomain.set(e.domainId, (roles = new Set()));
        roles.add(e.roleId);
        return;
      }
      case 'GroupRoleUnassigned': {
        const byDomain = this.assigned.get(e.groupId);
        const roles = byDomain?.get(e.domainId);
        roles?.delete(e.roleId);
        if (roles?.size === 0) byDomain!.delete(e.domainId);
        return;
      }
    }
  }

  /** A deleted user leaves every group. */
  dropUser(userId: string): void {
    for (const g of this.groupsOfUser.get(userId) ?? []) this.groups.get(g)?.userIds.delete(userId);
    this.groupsOfUser.delete(userId);
  }

  /** A deleted repository or view: the roles assigned on it go. */
  dropDomain(domainId: string): void {
    for (const byDomain of this.assigned.values()) byDomain.delete(domainId);
  }

  toSnapshot(): GroupsSnapshot {
    return {
      groups: [...this.groups.values()].map((g) => ({ id: g.id, displayName: g.displayName, lookupName: g.lookupName, userIds: [...g.userIds], createdAt: g.createdAt })),
      roles: [...this.roles.values()].map((r) => ({ ...r, viewPermissions: [...r.viewPermissions], systemPermissions: [...r.systemPermissions], organizationPermissions: [...r.organizationPermissions] })),
      assignments: this.assignments(),
    };
  }

  static fromSnapshot(s: GroupsSnapshot | undefined): GroupIndex {
    const idx = new GroupIndex();
    if (s === undefined) return idx;
    for (const r of s.roles) idx.apply({ type: 'RoleSaved', role: r, at: r.createdAt });
    for (const g of s.groups) {
      idx.apply({ type: 'GroupSaved', id: g.id, displayName: g.displayName, lookupName: g.lookupName, at: g.createdAt });
      idx.apply({ type: 'GroupUsersAdded', groupId: g.id, userIds: g.userIds });
    }
    for (const a of s.assignments) idx.apply({ type: 'GroupRoleAssigned', ...a, replace: false });
    return idx;
  }
}
