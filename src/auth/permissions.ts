/**
 * What a principal may do. Pure functions over Principal and global state; the require* ones throw
 * E_FORBIDDEN.
 *
 * In a repository or view (a search domain) a user has rights from two sources, added together:
 * direct membership (`addMember`: a member reads and works with the content; `hasMembershipAdminRights`
 * administers; `hasDeletionRights` changes retention and deletes events) and the roles of the
 * groups the user is in, assigned for that domain (`assignRoleToGroup`). A role gives nothing
 * without `ReadAccess`; with it, the rights its permissions grant (`granting`), one permission per
 * kind of change as the product has them. Root may do everything everywhere.
 */
import { LogsvcError } from '../lib/errors.js';
import type { GlobalState, Membership, Repository, StoredView } from '../global/index.js';
import { isRoot, type Principal } from './principal.js';
import type { ViewPermission } from './role-permissions.js';

/** Content of a search domain that a role's permissions create, update and delete, as the product names it. */
export type ContentKind = 'Triggers' | 'Actions' | 'Files' | 'SavedQueries';
export type ContentOp = 'create' | 'update' | 'delete';

/**
 * What may be done in a search domain: search it; administer its members; change its retention;
 * delete its events; change its description or default search settings; change its parsers or
 * ingest tokens; create, update or delete its alerts (triggers), actions, files and saved searches.
 */
export type DomainRight =
  | 'read'
  | 'admin'
  | 'retention'
  | 'deleteEvents'
  | 'description'
  | 'searchSettings'
  | 'parsers'
  | 'ingestTokens'
  | `${ContentOp}:${ContentKind}`;

const CONTENT_OPS: Readonly<Record<ContentOp, 'Create' | 'Update' | 'Delete'>> = { create: 'Create', update: 'Update', delete: 'Delete' };

/** The role permissions (besides ReadAccess) that give `right`; each one alone is enough. */
export function granting(right: Exclude<DomainRight, 'read'>): readonly ViewPermission[] {
  switch (right) {
    case 'admin':
      return ['ChangeUserAccess', 'ChangeViewOrRepositoryPermissions'];
    case 'retention':
      return ['ChangeRetention'];
    case 'deleteEvents':
      return ['DeleteEvents'];
    case 'description':
      return ['ChangeViewOrRepositoryDescription'];
    case 'searchSettings':
      return ['ChangeDefaultSearchSettings'];
    case 'parsers':
      return ['ChangeParsers'];
    case 'ingestTokens':
      return ['ChangeIngestTokens'];
    default: {
      const [op, kind] = right.split(':') as [ContentOp, ContentKind];
      const perms: ViewPermission[] = [`Change${kind}`, `${CONTENT_OPS[op]}${kind}`];
      if (kind === 'Triggers' || kind === 'Actions') perms.push('ChangeTriggersAndActions');
      return perms;
    }
  }
}

/**
 * What direct membership gives: a member searches the domain and works with its content (alerts,
 * actions, files, saved searches); one with membership-admin rights also administers it (members,
 * description, search settings, parsers, ingest tokens); one with deletion rights changes its
 * retention and deletes events.
 */
function memberHas(m: Membership, right: DomainRight): boolean {
  switch (right) {
    case 'admin':
    case 'description':
    case 'searchSettings':
    case 'parsers':
    case 'ingestTokens':
      return m.canAdminMembers;
    case 'retention':
    case 'deleteEvents':
      return m.canDeleteData;
    default:
      return true;
  }
}

/** Who may do `right`, for the refusal's message. */
export function whoMay(right: Exclude<DomainRight, 'read'>): string {
  const member = right === 'retention' || right === 'deleteEvents' ? 'deletion rights on it' : right.includes(':') ? 'membership of it' : 'member-admin rights on it';
  const perms = granting(right);
  return `root, ${member}, or a group role with ReadAccess and ${perms.length === 1 ? perms[0] : `one of ${perms.join(', ')}`} there`;
}

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
  if (m !== undefined && memberHas(m, right)) return true;
  const perms = state.groups.permissions(userId, domain.id);
  if (!perms.has('ReadAccess')) return false;
  return right === 'read' || granting(right).some((x) => perms.has(x));
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

/** Throws E_FORBIDDEN unless `p` has `right` in `domain` (the caller has checked that `p` may see it). */
export function requireRight(state: GlobalState, p: Principal, domain: SearchDomainAccess & { name: string }, right: Exclude<DomainRight, 'read'>, action: string): void {
  if (!principalHas(state, p, domain, right)) throw new LogsvcError('E_FORBIDDEN', `${action} in "${domain.name}" requires ${whoMay(right)}`);
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
