/**
 * Who may see and change a search domain's alerts and actions: those who may search it (members,
 * group roles with ReadAccess) and root see them; members and root change them, and so do group
 * roles with the product's permission for the change (CreateTriggers, UpdateTriggers,
 * DeleteTriggers, the Actions ones, or ChangeTriggers / ChangeActions / ChangeTriggersAndActions). A search domain is a repository or a view: an alert of a
 * view runs over the view's connections, each with its filter, as its owner's search of the view
 * would. Ingest tokens may not. Those without access get the same "not found" as for a missing
 * repository, so names do not leak.
 */
import { canSeeView, requireRight, requireUser, visibleRepository, type DomainRight, type Principal, type SearchDomainAccess } from '../auth/index.js';
import type { GlobalState, StoredView } from '../global/index.js';
import { LogsvcError } from '../lib/errors.js';

/** A repository or a view that alerts and actions belong to (AlertDefinition.repositoryId is its id). */
export interface AlertDomain {
  kind: 'repository' | 'view';
  id: string;
  name: string;
  access: SearchDomainAccess;
  /** Views only: the view as stored, for its connections. */
  view?: StoredView;
}

/**
 * The repository or view named `name` if `p` may search it, and, for a change, has the `change`
 * right there (a member of it, or a group role with the product's permission for that change).
 */
export function memberDomain(state: GlobalState, p: Principal, name: string, action: string, change?: Exclude<DomainRight, 'read'>): AlertDomain {
  requireUser(p, action);
  const view = state.views.byName(name);
  if (view !== undefined) {
    if (!canSeeView(state, p, view)) throw new LogsvcError('E_NOT_FOUND', `view "${name.slice(0, 200)}" does not exist or you have no access to it`);
    if (change !== undefined) requireRight(state, p, view, change, action);
    return { kind: 'view', id: view.id, name: view.name, access: view, view };
  }
  const repo = visibleRepository(state, p, name);
  if (change !== undefined) requireRight(state, p, repo, change, action);
  return { kind: 'repository', id: repo.id, name: repo.name, access: repo };
}

/** The repository or view with id `id` (an alert's), or undefined once it is deleted. */
export function domainById(state: GlobalState, id: string): AlertDomain | undefined {
  const repo = state.repositories.get(id);
  if (repo !== undefined) return { kind: 'repository', id: repo.id, name: repo.name, access: repo };
  const view = state.views.get(id);
  return view === undefined ? undefined : { kind: 'view', id: view.id, name: view.name, access: view, view };
}
