/**
 * What a principal may do. Pure functions over Principal and global state; the require* ones throw
 * E_FORBIDDEN.
 *
 * In a repository or view (a search domain) a user has rights from two sources, added together:
 * direct membership (`addMember`: a member reads; `hasMembershipAdminRights` administers;
 * `hasDeletionRights` changes retention and deletes events) and the roles of the groups the user
 * is in, assigned for that domain (`assignRoleToGroup`). A role gives nothing without `ReadAccess`;
 * with it, the rights in GRANTING. Root may do everything everywhere.
 */
import { LogsvcError } from '../lib/errors.js';
import type { GlobalState, Membership, Repository, StoredView } from '../global/index.js';
import { isRoot, type Principal } from './principal.js';
import type { ViewPermission } from './role-permissions.js';

/** What may be done in a search domain: search it; administer its members and settings; change its retention; delete its events. */
export type DomainRight = 'read' | 'admin' | 'retention' | 'deleteEvents';

/** The role permissions (besides ReadAccess) that give each right. */
export const GRANTING: Readonly<Record<Exclude<DomainRight, 'read'>, readonly ViewPermission[]>> = {
  admin: ['ChangeUserAccess', 'ChangeViewOrRepositoryPermissions'],
  retention: ['ChangeRetention'],
  deleteEvents: ['DeleteEvents'],
};

/** A repository or a view: what rights are decided on. */
export interface SearchDomainAccess {
  id: string;
  members: ReadonlyMap<string, Membership>;
}

export function requireRoot(p: Principal, action: string): void {
  if (!isRoot(p)) throw new LogsvcError('E_FORBIDDEN', `${action} requires a root user`);
}

export function requireUser(p: Principal, action: string): asserts p is Principal & { kind: 'user' | 'local-admin' } {
  if (p.kind === 'ingest') throw new LogsvcError('E_FORBIDDEN', `${action}: an ingest token can only send data`);
}

/** Whether user `userId` (not root: callers check that) has `right` in `domain`. */
export function userHas(state: GlobalState, userId: string, domain: SearchDomainAccess, right: DomainRight): boolean {
  const m = domain.members.get(userId);
  if (m !== undefined && (right === 'read' || (right === 'admin' ? m.canAdminMembers : m.canDeleteData))) return true;
  const perms = state.groups.permissions(userId, domain.id);
  if (!perms.has('ReadAccess')) return false;
  return right === 'read' || GRANTING[right].some((x) => perms.has(x));
}

/** Whether `p` has `right` in `domain`; an ingest token only reads its own repository. */
export function principalHas(state: GlobalState, p: Principal, domain: SearchDomainAccess, right: DomainRight): boolean {
  if (isRoot(p)) return true;
  if (p.kind === 'user') return userHas(state, p.userId, domain, right);
  return p.kind === 'ingest' && right === 'read' && p.repositoryId === domain.id;
}

/** Whether the user with id `userId` exists and may search `domain` (an alert's owner, for one). */
export function userMayRead(state: GlobalState, userId: string, domain: SearchDomainAccess): boolean {
  const u = state.users.get(userId);
  return u !== undefined && (u.isRoot || userHas(state, u.id, domain, 'read'));
}

export function canSeeRepository(state: GlobalState, p: Principal, repo: Repository): boolean {
  return principalHas(state, p, repo, 'read');
}

export function canAdminRepository(state: GlobalState, p: Principal, repo: Repository): boolean {
  return p.kind !== 'ingest' && principalHas(state, p, repo, 'admin');
}

export function canSeeView(state: GlobalState, p: Principal, v: StoredView): boolean {
  return p.kind !== 'ingest' && principalHas(state, p, v, 'read');
}

export function canAdminView(state: GlobalState, p: Principal, v: StoredView): boolean {
  return p.kind !== 'ingest' && principalHas(state, p, v, 'admin');
}

/** The repository named `name` if `p` may see it; otherwise the same "not found" either way, so names do not leak. */
export function visibleRepository(state: GlobalState, p: Principal, name: string): Repository {
  const repo = state.repositoryByName(name);
  if (repo === undefined || !canSeeRepository(state, p, repo)) {
    throw new LogsvcError('E_NOT_FOUND', `repository "${name}" does not exist or you have no access to it`);
  }
  return repo;
}
