/** What a principal may do. Pure functions over Principal and global state; each throws E_FORBIDDEN. */
import { LogsvcError } from '../lib/errors.js';
import type { GlobalState, Repository } from '../global/index.js';
import { isRoot, type Principal } from './principal.js';

export function requireRoot(p: Principal, action: string): void {
  if (!isRoot(p)) throw new LogsvcError('E_FORBIDDEN', `${action} requires a root user`);
}

export function requireUser(p: Principal, action: string): asserts p is Principal & { kind: 'user' | 'local-admin' } {
  if (p.kind === 'ingest') throw new LogsvcError('E_FORBIDDEN', `${action}: an ingest token can only send data`);
}

export function canSeeRepository(p: Principal, repo: Repository): boolean {
  if (isRoot(p)) return true;
  if (p.kind === 'user') return repo.members.has(p.userId);
  return p.kind === 'ingest' && p.repositoryId === repo.id;
}

export function canAdminRepository(p: Principal, repo: Repository): boolean {
  if (isRoot(p)) return true;
  return p.kind === 'user' && repo.members.get(p.userId)?.canAdminMembers === true;
}

/** The repository named `name` if `p` may see it; otherwise the same "not found" either way, so names do not leak. */
export function visibleRepository(state: GlobalState, p: Principal, name: string): Repository {
  const repo = state.repositoryByName(name);
  if (repo === undefined || !canSeeRepository(p, repo)) {
    throw new LogsvcError('E_NOT_FOUND', `repository "${name}" does not exist or you have no access to it`);
  }
  return repo;
}
