/**
 * ViewService: views (createView, updateView, deleteSearchDomain on a view) and their members, and
 * resolving a view for a search. Root creates and deletes views; root or a member with admin rights
 * changes connections and members. A member of a view searches every connected repository through
 * the connection's filter, whether or not the member belongs to those repositories.
 */
import { LogsvcError } from '../lib/errors.js';
import type { Clock } from '../lib/clock.js';
import type { GlobalState, GlobalStore, Repository, StoredView, ViewConnection } from '../global/index.js';
import { canAdminView, canSeeView, newId, requireRoot, requireUser, type Principal } from '../auth/index.js';

const VIEW_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;
const MAX_CONNECTIONS = 100;
const MAX_FILTER_CHARS = 16 * 1024;
const MAX_DESCRIPTION = 4096;

export interface ConnectionInput {
  repositoryName: string;
  filter: string;
}

/** What a search over the view reads: each connected repository with its filter. */
export interface ViewTarget {
  id: string;
  name: string;
  sources: { id: string; name: string; filter: string }[];
}

/** What a search over view `v` reads: its connected repositories (deleted ones left out), each with its filter. */
export function viewTarget(state: GlobalState, v: StoredView): ViewTarget {
  const sources = v.connections.flatMap((c) => {
    const r = state.repositories.get(c.repositoryId);
    return r === undefined ? [] : [{ id: r.id, name: r.name, filter: c.filter }];
  });
  return { id: v.id, name: v.name, sources };
}

export class ViewService {
  constructor(
    private readonly store: GlobalStore,
    private readonly clock: Clock,
    /** Throws E_VALIDATION/E_QUERY when `filter` is not a filter (does not compile, or aggregates). */
    private readonly checkFilter: (filter: string) => void,
  ) {}

  canSee(p: Principal, v: StoredView): boolean {
    return canSeeView(this.store.state, p, v);
  }

  private canAdmin(p: Principal, v: StoredView): boolean {
    return canAdminView(this.store.state, p, v);
  }

  /** True when `name` names a view (names are unique across repositories and views). */
  isView(name: string): boolean {
    return this.store.state.views.byName(name) !== undefined;
  }

  /** The view named `name` if `p` may see it; undefined if there is no view of that name. */
  find(p: Principal, name: string): StoredView | undefined {
    const v = this.store.state.views.byName(name);
    if (v === undefined) return undefined;
    if (!this.canSee(p, v)) throw new LogsvcError('E_NOT_FOUND', `view "${name}" does not exist or you have no access to it`);
    return v;
  }

  list(p: Principal): StoredView[] {
    return this.store.state.views.all().filter((v) => this.canSee(p, v)).sort((a, b) => a.name.localeCompare(b.name));
  }

  /** A connected repository (for showing connections), or undefined once it is deleted. */
  repository(id: string): Repository | undefined {
    return this.store.state.repositories.get(id);
  }

  /** The search target of a view `p` may see. */
  target(v: StoredView): ViewTarget {
    return viewTarget(this.store.state, v);
  }

  private connections(state: GlobalState, input: readonly ConnectionInput[] | null | undefined): ViewConnection[] {
    const list = input ?? [];
    if (list.length > MAX_CONNECTIONS) throw new LogsvcError('E_VALIDATION', `connections: at most ${MAX_CONNECTIONS}`);
    const seen = new Set<string>();
    return list.map((c, i) => {
      const r = state.repositoryByName(c.repositoryName);
      if (r === undefined) throw new LogsvcError('E_VALIDATION', `connections[${i}].repositoryName: repository "${c.repositoryName}" does not exist`);
      if (seen.has(r.id)) throw new LogsvcError('E_VALIDATION', `connections[${i}].repositoryName: "${c.repositoryName}" is connected twice`);
      seen.add(r.id);
      if (c.filter.length > MAX_FILTER_CHARS) throw new LogsvcError('E_VALIDATION', `connections[${i}].filter: longer than ${MAX_FILTER_CHARS} characters`);
      try {
        this.checkFilter(c.filter);
      } catch (err) {
        throw new LogsvcError('E_VALIDATION', `connections[${i}].filter: ${(err as Error).message}`);
      }
      return { repositoryId: r.id, filter: c.filter.trim() === '*' ? '' : c.filter };
    });
  }

  async create(p: Principal, name: string, description: string, connections: readonly ConnectionInput[] | null | undefined): Promise<StoredView> {
    requireRoot(p, 'creating a view');
    if (!VIEW_NAME.test(name)) throw new LogsvcError('E_VALIDATION', 'name: must be 1 to 100 letters, digits, "_", "-" or ".", starting with a letter or digit');
    if (description.length > MAX_DESCRIPTION) throw new LogsvcError('E_VALIDATION', `description: at most ${MAX_DESCRIPTION} characters`);
    const id = newId();
    await this.store.transact((s) => {
      if (s.repositoryByName(name) !== undefined || s.views.byName(name) !== undefined) throw new LogsvcError('E_CONFLICT', `a repository or view named "${name}" already exists`);
      return { events: [{ type: 'ViewSaved', id, name, description, connections: this.connections(s, connections), at: this.clock.now() }], result: undefined };
    });
    return this.store.state.views.get(id)!;
  }

  async update(p: Principal, name: string, connections: readonly ConnectionInput[]): Promise<StoredView> {
    requireUser(p, 'changing a view');
    const id = await this.store.transact((s) => {
      const v = s.views.byName(name);
      if (v === undefined || !this.canSee(p, v)) throw new LogsvcError('E_NOT_FOUND', `view "${name}" does not exist or you have no access to it`);
      if (!this.canAdmin(p, v)) throw new LogsvcError('E_FORBIDDEN', `changing view "${name}" requires root or member-admin rights on it`);
      return { events: [{ type: 'ViewSaved', id: v.id, name: v.name, description: v.description, connections: this.connections(s, connections), at: this.clock.now() }], result: v.id };
    });
    return this.store.state.views.get(id)!;
  }

  delete(p: Principal, name: string): Promise<void> {
    requireRoot(p, 'deleting a view');
    return this.store.transact((s) => {
      const v = s.views.byName(name);
      if (v === undefined) throw new LogsvcError('E_NOT_FOUND', `view "${name}" does not exist`);
      return { events: [{ type: 'ViewDeleted', id: v.id }], result: undefined };
    });
  }

  setMember(p: Principal, name: string, username: string, rights: { canAdminMembers: boolean; canDeleteData: boolean }): Promise<void> {
    requireUser(p, 'adding a member');
    return this.store.transact((s) => {
      const v = this.adminOf(s, p, name);
      const u = s.userByName(username);
      if (u === undefined) throw new LogsvcError('E_NOT_FOUND', `user "${username}" does not exist`);
      return { events: [{ type: 'ViewMemberSet', viewId: v.id, userId: u.id, ...rights }], result: undefined };
    });
  }

  removeMember(p: Principal, name: string, username: string): Promise<void> {
    requireUser(p, 'removing a member');
    return this.store.transact((s) => {
      const v = this.adminOf(s, p, name);
      const u = s.userByName(username);
      if (u === undefined || !v.members.has(u.id)) throw new LogsvcError('E_NOT_FOUND', `user "${username}" is not a member of view "${name}"`);
      return { events: [{ type: 'ViewMemberRemoved', viewId: v.id, userId: u.id }], result: undefined };
    });
  }

  private adminOf(s: GlobalState, p: Principal, name: string): StoredView {
    const v = s.views.byName(name);
    if (v === undefined || !this.canSee(p, v)) throw new LogsvcError('E_NOT_FOUND', `view "${name}" does not exist or you have no access to it`);
    if (!this.canAdmin(p, v)) throw new LogsvcError('E_FORBIDDEN', `changing view "${name}" requires root or member-admin rights on it`);
    return v;
  }
}
