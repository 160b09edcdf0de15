/**
 * GroupService: groups of users, roles, and the roles groups have on repositories and views
 * (src/global/groups.ts holds them; src/auth/permissions.ts decides what they allow). Root creates,
 * changes and removes groups and roles and puts users in groups; root or an administrator of a
 * repository or view assigns roles to groups there. Any user may read groups and roles. Every rule
 * is checked inside the store's transaction, so it holds under concurrency and across a cluster.
 */
import { LogsvcError } from '../lib/errors.js';
import type { Clock } from '../lib/clock.js';
import type { GlobalEvent, GlobalState, GlobalStore, Repository, StoredGroup, StoredRole, StoredView } from '../global/index.js';
import {
  canAdminRepository,
  canAdminView,
  newId,
  ORGANIZATION_PERMISSIONS,
  requireRoot,
  requireUser,
  SYSTEM_PERMISSIONS,
  VIEW_PERMISSIONS,
  type Principal,
} from '../auth/index.js';

const NAME = /^[^\p{Cc}]{1,200}$/u;
const MAX_GROUPS = 10_000;
const MAX_ROLES = 1_000;
const MAX_USERS_PER_CALL = 1_000;
const MAX_TEXT = 1024;

export interface RoleInput {
  displayName: string;
  viewPermissions: readonly string[];
  systemPermissions?: readonly string[] | null | undefined;
  organizationPermissions?: readonly string[] | null | undefined;
  color?: string | null | undefined;
  description?: string | null | undefined;
}

export interface RoleAssignmentInput {
  /** The repository's or view's id (its name is accepted too). */
  viewId: string;
  groupId: string;
  roleId: string;
}

/** A search domain a role is assigned on. */
export type AssignedDomain = { kind: 'repository'; domain: Repository } | { kind: 'view'; domain: StoredView };

export interface GroupPage {
  groups: StoredGroup[];
  total: number;
}

function checkName(v: unknown, field: string): string {
  if (typeof v !== 'string' || v.trim() === '' || !NAME.test(v)) throw new LogsvcError('E_VALIDATION', `${field}: must be 1 to 200 characters without control characters`);
  return v;
}

function checkText(v: unknown, field: string): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v !== 'string' || v.length > MAX_TEXT) throw new LogsvcError('E_VALIDATION', `${field}: must be a string of at most ${MAX_TEXT} characters`);
  return v;
}

function checkPermissions(v: unknown, known: readonly string[], field: string): string[] {
  if (v === null || v === undefined) return [];
  if (!Array.isArray(v)) throw new LogsvcError('E_VALIDATION', `${field}: must be a list of permission names`);
  const out = new Set<string>();
  for (const p of v) {
    if (typeof p !== 'string' || !known.includes(p)) throw new LogsvcError('E_VALIDATION', `${field}: "${String(p).slice(0, 100)}" is not a permission of that kind`);
    out.add(p);
  }
  return [...out];
}

export class GroupService {
  constructor(
    private readonly store: GlobalStore,
    private readonly clock: Clock,
  ) {}

  // --- reading ---------------------------------------------------------------------------------

  /** Groups whose display name contains `search` (any case), by name; page `pageNumber` (from 1) of `pageSize`. */
  page(p: Principal, search: string | null | undefined, pageNumber: number, pageSize: number): GroupPage {
    requireUser(p, 'listing groups');
    if (!Number.isInteger(pageNumber) || pageNumber < 1) throw new LogsvcError('E_VALIDATION', `pageNumber: must be a whole number from 1 (got ${pageNumber})`);
    if (!Number.isInteger(pageSize) || pageSize < 1) throw new LogsvcError('E_VALIDATION', `pageSize: must be a whole number from 1 (got ${pageSize})`);
    const needle = (search ?? '').toLowerCase();
    const all = [...this.store.state.groups.groups.values()]
      .filter((g) => needle === '' || g.displayName.toLowerCase().includes(needle))
      .sort((a, b) => a.displayName.localeCompare(b.displayName) || (a.id < b.id ? -1 : 1));
    // humioctl asks for page 1 of 2^31-1: the product's paging, without an overflowing offset.
    const from = Math.min(all.length, (pageNumber - 1) * pageSize);
    return { groups: all.slice(from, from + pageSize), total: all.length };
  }

  group(p: Principal, id: string): StoredGroup {
    requireUser(p, 'reading a group');
    return this.groupIn(this.store.state, id);
  }

  groupByName(p: Principal, displayName: string): StoredGroup {
    requireUser(p, 'reading a group');
    const g = this.store.state.groups.groupByName(displayName);
    if (g === undefined) throw new LogsvcError('E_NOT_FOUND', `group "${displayName.slice(0, 200)}" does not exist`);
    return g;
  }

  roles(p: Principal): StoredRole[] {
    requireUser(p, 'listing roles');
    return [...this.store.state.groups.roles.values()].sort((a, b) => a.displayName.localeCompare(b.displayName));
  }

  role(p: Principal, id: string): StoredRole {
    requireUser(p, 'reading a role');
    return this.roleIn(this.store.state, id);
  }

  /** The roles group `groupId` has, with the repository or view each is for (deleted ones left out). */
  rolesOf(groupId: string, domainId?: string): { domain: AssignedDomain; role: StoredRole }[] {
    const s = this.store.state;
    return s.groups.assignments(groupId).flatMap((a) => {
      if (domainId !== undefined && a.domainId !== domainId) return [];
      const domain = this.domainById(s, a.domainId);
      const role = s.groups.roles.get(a.roleId);
      return domain === undefined || role === undefined ? [] : [{ domain, role }];
    });
  }

  /** The groups that have role `roleId` somewhere. */
  groupsWithRole(roleId: string): StoredGroup[] {
    const s = this.store.state;
    const ids = new Set(s.groups.assignments().filter((a) => a.roleId === roleId).map((a) => a.groupId));
    return [...ids].flatMap((id) => {
      const g = s.groups.groups.get(id);
      return g === undefined ? [] : [g];
    });
  }

  // --- groups ----------------------------------------------------------------------------------

  async addGroup(p: Principal, displayName: string, lookupName: string | null | undefined): Promise<StoredGroup> {
    requireRoot(p, 'adding a group');
    const name = checkName(displayName, 'displayName');
    const lookup = checkText(lookupName, 'lookupName');
    const id = newId();
    await this.store.transact((s) => {
      if (s.groups.groupByName(name) !== undefined) throw new LogsvcError('E_CONFLICT', `displayName: a group named "${name}" already exists`);
      if (s.groups.groups.size >= MAX_GROUPS) throw new LogsvcError('E_CONFLICT', `there are already ${MAX_GROUPS} groups, the most allowed`);
      return { events: [{ type: 'GroupSaved', id, displayName: name, lookupName: lookup, at: this.clock.now() }], result: undefined };
    });
    return this.store.state.groups.groups.get(id)!;
  }

  /** Changes the display name and lookup name given (a field left out or null keeps its value). */
  async updateGroup(p: Principal, groupId: string, change: { displayName?: string | null | undefined; lookupName?: string | null | undefined }): Promise<StoredGroup> {
    requireRoot(p, 'changing a group');
    const name = change.displayName === null || change.displayName === undefined ? null : checkName(change.displayName, 'displayName');
    const lookup = checkText(change.lookupName, 'lookupName');
    await this.store.transact((s) => {
      const g = this.groupIn(s, groupId);
      const other = name === null ? undefined : s.groups.groupByName(name);
      if (other !== undefined && other.id !== g.id) throw new LogsvcError('E_CONFLICT', `displayName: a group named "${name}" already exists`);
      return { events: [{ type: 'GroupSaved', id: g.id, displayName: name ?? g.displayName, lookupName: lookup ?? g.lookupName, at: this.clock.now() }], result: undefined };
    });
    return this.store.state.groups.groups.get(groupId)!;
  }

  /** Removes the group (its users lose what its roles gave them); answers the group as it was. */
  removeGroup(p: Principal, groupId: string): Promise<StoredGroup> {
    requireRoot(p, 'removing a group');
    return this.store.transact((s) => {
      const g = this.groupIn(s, groupId);
      return { events: [{ type: 'GroupDeleted', id: g.id }], result: { ...g, userIds: new Set(g.userIds) } };
    });
  }

  /** Adds users (by id, or by user name) to the group; users already in it stay. */
  async addUsers(p: Principal, groupId: string, users: readonly string[]): Promise<StoredGroup> {
    requireRoot(p, 'adding users to a group');
    await this.store.transact((s) => {
      const g = this.groupIn(s, groupId);
      const ids = this.userIds(s, users).filter((id) => !g.userIds.has(id));
      return { events: ids.length === 0 ? [] : [{ type: 'GroupUsersAdded', groupId: g.id, userIds: ids }], result: undefined };
    });
    return this.store.state.groups.groups.get(groupId)!;
  }

  /** Removes users (by id, or by user name) from the group; each must be in it. */
  async removeUsers(p: Principal, groupId: string, users: readonly string[]): Promise<StoredGroup> {
    requireRoot(p, 'removing users from a group');
    await this.store.transact((s) => {
      const g = this.groupIn(s, groupId);
      const ids = this.userIds(s, users);
      users.forEach((u, i) => {
        if (!g.userIds.has(this.userIds(s, [u])[0]!)) throw new LogsvcError('E_NOT_FOUND', `users[${i}]: user "${u.slice(0, 200)}" is not in group "${g.displayName}"`);
      });
      return { events: ids.length === 0 ? [] : [{ type: 'GroupUsersRemoved', groupId: g.id, userIds: ids }], result: undefined };
    });
    return this.store.state.groups.groups.get(groupId)!;
  }

  // --- roles -----------------------------------------------------------------------------------

  async createRole(p: Principal, input: RoleInput): Promise<StoredRole> {
    requireRoot(p, 'creating a role');
    const id = newId();
    const role = { id, ...this.roleFields(input) };
    await this.store.transact((s) => {
      if (s.groups.roleByName(role.displayName) !== undefined) throw new LogsvcError('E_CONFLICT', `displayName: a role named "${role.displayName}" already exists`);
      if (s.groups.roles.size >= MAX_ROLES) throw new LogsvcError('E_CONFLICT', `there are already ${MAX_ROLES} roles, the most allowed`);
      return { events: [{ type: 'RoleSaved', role, at: this.clock.now() }], result: undefined };
    });
    return this.store.state.groups.roles.get(id)!;
  }

  /** Replaces the role's name and permissions; every group that has it gets the new permissions at once. */
  async updateRole(p: Principal, roleId: string, input: RoleInput): Promise<StoredRole> {
    requireRoot(p, 'changing a role');
    const fields = this.roleFields(input);
    await this.store.transact((s) => {
      const old = this.roleIn(s, roleId);
      const other = s.groups.roleByName(fields.displayName);
      if (other !== undefined && other.id !== old.id) throw new LogsvcError('E_CONFLICT', `displayName: a role named "${fields.displayName}" already exists`);
      return { events: [{ type: 'RoleSaved', role: { id: old.id, ...fields }, at: this.clock.now() }], result: undefined };
    });
    return this.store.state.groups.roles.get(roleId)!;
  }

  /** Removes the role and every assignment of it. */
  removeRole(p: Principal, roleId: string): Promise<void> {
    requireRoot(p, 'removing a role');
    return this.store.transact((s) => {
      const r = this.roleIn(s, roleId);
      return { events: [{ type: 'RoleDeleted', id: r.id }], result: undefined };
    });
  }

  // --- assignments -----------------------------------------------------------------------------

  /**
   * Gives group `groupId` role `roleId` on a repository or view. `replace` (the default, as the
   * product's overrideExistingAssignmentsForView): the group's other roles there go.
   */
  assignRole(p: Principal, input: RoleAssignmentInput, replace: boolean): Promise<{ domain: AssignedDomain; role: StoredRole }> {
    requireUser(p, 'assigning a role');
    return this.store.transact((s) => {
      const { domain, g, r } = this.assignment(s, p, input);
      const event: GlobalEvent = { type: 'GroupRoleAssigned', groupId: g.id, domainId: domain.domain.id, roleId: r.id, replace };
      return { events: [event], result: { domain, role: r } };
    });
  }

  async unassignRole(p: Principal, input: RoleAssignmentInput): Promise<StoredGroup> {
    requireUser(p, 'unassigning a role');
    await this.store.transact((s) => {
      const { domain, g, r } = this.assignment(s, p, input);
      if (!s.groups.assignments(g.id).some((a) => a.domainId === domain.domain.id && a.roleId === r.id)) {
        throw new LogsvcError('E_NOT_FOUND', `group "${g.displayName}" does not have role "${r.displayName}" on ${domain.kind} "${domain.domain.name}"`);
      }
      return { events: [{ type: 'GroupRoleUnassigned', groupId: g.id, domainId: domain.domain.id, roleId: r.id }], result: undefined };
    });
    return this.store.state.groups.groups.get(input.groupId)!;
  }

  // --- helpers ---------------------------------------------------------------------------------

  private assignment(s: GlobalState, p: Principal, input: RoleAssignmentInput): { domain: AssignedDomain; g: StoredGroup; r: StoredRole } {
    const domain = this.domainById(s, input.viewId) ?? this.domainByName(s, input.viewId);
    const mayAdmin = domain !== undefined && (domain.kind === 'repository' ? canAdminRepository(s, p, domain.domain) : canAdminView(s, p, domain.domain));
    // Those who may not administer it learn nothing about it (names do not leak).
    if (domain === undefined || !mayAdmin) {
      throw new LogsvcError('E_NOT_FOUND', `viewId: repository or view "${input.viewId.slice(0, 200)}" does not exist or you may not change who has access to it (root or member-admin rights)`);
    }
    return { domain, g: this.groupIn(s, input.groupId), r: this.roleIn(s, input.roleId) };
  }

  private domainById(s: GlobalState, id: string): AssignedDomain | undefined {
    const repo = s.repositories.get(id);
    if (repo !== undefined) return { kind: 'repository', domain: repo };
    const view = s.views.get(id);
    return view === undefined ? undefined : { kind: 'view', domain: view };
  }

  private domainByName(s: GlobalState, name: string): AssignedDomain | undefined {
    const repo = s.repositoryByName(name);
    if (repo !== undefined) return { kind: 'repository', domain: repo };
    const view = s.views.byName(name);
    return view === undefined ? undefined : { kind: 'view', domain: view };
  }

  private groupIn(s: GlobalState, id: string): StoredGroup {
    const g = s.groups.groups.get(id);
    if (g === undefined) throw new LogsvcError('E_NOT_FOUND', `group "${String(id).slice(0, 200)}" does not exist`);
    return g;
  }

  private roleIn(s: GlobalState, id: string): StoredRole {
    const r = s.groups.roles.get(id);
    if (r === undefined) throw new LogsvcError('E_NOT_FOUND', `role "${String(id).slice(0, 200)}" does not exist`);
    return r;
  }

  private userIds(s: GlobalState, users: readonly string[]): string[] {
    if (!Array.isArray(users) || users.length > MAX_USERS_PER_CALL) throw new LogsvcError('E_VALIDATION', `users: a list of at most ${MAX_USERS_PER_CALL} user ids`);
    return [
      ...new Set(
        users.map((u, i) => {
          const found = s.users.get(u) ?? s.userByName(u);
          if (found === undefined) throw new LogsvcError('E_NOT_FOUND', `users[${i}]: user "${String(u).slice(0, 200)}" does not exist`);
          return found.id;
        }),
      ),
    ];
  }

  private roleFields(input: RoleInput): Omit<StoredRole, 'id' | 'createdAt'> {
    return {
      displayName: checkName(input.displayName, 'displayName'),
      viewPermissions: checkPermissions(input.viewPermissions, VIEW_PERMISSIONS, 'viewPermissions'),
      systemPermissions: checkPermissions(input.systemPermissions, SYSTEM_PERMISSIONS, 'systemPermissions'),
      organizationPermissions: checkPermissions(input.organizationPermissions, ORGANIZATION_PERMISSIONS, 'organizationPermissions'),
      color: checkText(input.color, 'color'),
      description: checkText(input.description, 'description'),
    };
  }
}
