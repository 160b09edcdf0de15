/**
 * SavedQueryService: saved searches of a repository or view (createSavedQuery, updateSavedQuery,
 * deleteSavedQuery, `savedQueries`), and the lookup that `$name()` calls in queries use. Those who
 * may search the domain read them; members (or root) change them, and so do group roles with the
 * product's permission for the change (Create/Update/DeleteSavedQueries, ChangeSavedQueries);
 * names are unique per domain; the query text
 * must compile (with calls to other saved searches put in) when it is saved.
 */
import { LogsvcError } from '../lib/errors.js';
import type { Clock } from '../lib/clock.js';
import type { GlobalState, GlobalStore, Repository, StoredSavedQuery, StoredView } from '../global/index.js';
import { canSeeRepository, canSeeView, newId, requireRight, requireUser, type ContentOp, type Principal } from '../auth/index.js';
import type { SavedLookup } from '../query/saved-calls.js';

const MAX_NAME = 200;
const MAX_QUERY = 64 * 1024;
const MAX_PER_DOMAIN = 1000;
const CHANGING: Readonly<Record<`${ContentOp}:SavedQueries`, string>> = { 'create:SavedQueries': 'creating', 'update:SavedQueries': 'updating', 'delete:SavedQueries': 'deleting' };

export interface SavedQueryInput {
  name?: string | null | undefined;
  queryString?: string | null | undefined;
  start?: string | null | undefined;
  end?: string | null | undefined;
  isLive?: boolean | null | undefined;
}

export class SavedQueryService {
  constructor(
    private readonly store: GlobalStore,
    private readonly clock: Clock,
    /** Throws E_QUERY when the text (in the domain, its own calls put in) does not compile. */
    private readonly checkQuery: (domainId: string, queryString: string) => void,
  ) {}

  /** The repository or view named `name`, if `p` may see it and, for a change, has the `change` right there. */
  private domain(s: GlobalState, p: Principal, name: string, change?: `${ContentOp}:SavedQueries`): { id: string; name: string } {
    requireUser(p, 'saved searches');
    const d = this.visible(s, p, name);
    if (change !== undefined) requireRight(s, p, d, change, `${CHANGING[change]} a saved search`);
    return d;
  }

  private visible(s: GlobalState, p: Principal, name: string): Repository | StoredView {
    const repo = s.repositoryByName(name);
    if (repo !== undefined && canSeeRepository(s, p, repo)) return repo;
    const view = s.views.byName(name);
    if (view !== undefined && canSeeView(s, p, view)) return view;
    throw new LogsvcError('E_NOT_FOUND', `repository or view "${name}" does not exist or you have no access to it`);
  }

  list(p: Principal, domainName: string): StoredSavedQuery[] {
    const d = this.domain(this.store.state, p, domainName);
    return this.store.state.savedQueries.of(d.id).sort((a, b) => a.name.localeCompare(b.name));
  }

  get(p: Principal, domainName: string, id: string): StoredSavedQuery {
    const d = this.domain(this.store.state, p, domainName);
    return this.find(this.store.state, d, id);
  }

  /** For `$name()` calls in a query over the domain with id `domainId`. */
  lookup(domainId: string): SavedLookup {
    return (name) => this.store.state.savedQueries.byName(domainId, name)?.queryString;
  }

  private find(s: GlobalState, d: { id: string; name: string }, id: string): StoredSavedQuery {
    const q = s.savedQueries.get(id);
    if (q === undefined || q.domainId !== d.id) throw new LogsvcError('E_NOT_FOUND', `saved search "${id.slice(0, 100)}" does not exist in "${d.name}"`);
    return q;
  }

  private check(domainId: string, input: SavedQueryInput, old: StoredSavedQuery | null): Omit<StoredSavedQuery, 'id' | 'domainId' | 'createdAt'> {
    const name = input.name ?? old?.name;
    if (typeof name !== 'string' || name.trim() === '' || name.length > MAX_NAME || /[\p{Cc}]/u.test(name)) throw new LogsvcError('E_VALIDATION', `name: 1 to ${MAX_NAME} characters without control characters`);
    const queryString = input.queryString ?? old?.queryString;
    if (typeof queryString !== 'string' || queryString.length > MAX_QUERY) throw new LogsvcError('E_VALIDATION', `queryString: required, at most ${MAX_QUERY} characters`);
    try {
      this.checkQuery(domainId, queryString);
    } catch (err) {
      throw new LogsvcError('E_VALIDATION', `queryString: ${(err as Error).message}`);
    }
    return { name, queryString, start: input.start ?? old?.start ?? '24h', end: input.end ?? old?.end ?? 'now', isLive: input.isLive ?? old?.isLive ?? false };
  }

  async create(p: Principal, domainName: string, input: SavedQueryInput): Promise<StoredSavedQuery> {
    const id = newId();
    const d0 = this.domain(this.store.state, p, domainName, 'create:SavedQueries');
    const checked = this.check(d0.id, input, null);
    await this.store.transact((s) => {
      const d = this.domain(s, p, domainName, 'create:SavedQueries');
      const existing = s.savedQueries.of(d.id);
      if (existing.some((q) => q.name === checked.name)) throw new LogsvcError('E_CONFLICT', `name: a saved search named "${checked.name}" already exists in "${d.name}"`);
      if (existing.length >= MAX_PER_DOMAIN) throw new LogsvcError('E_CONFLICT', `"${d.name}" already has ${MAX_PER_DOMAIN} saved searches`);
      return { events: [{ type: 'SavedQuerySaved', query: { id, domainId: d.id, ...checked, createdAt: this.clock.now() } }], result: undefined };
    });
    return this.store.state.savedQueries.get(id)!;
  }

  async update(p: Principal, domainName: string, id: string, input: SavedQueryInput): Promise<StoredSavedQuery> {
    const d0 = this.domain(this.store.state, p, domainName, 'update:SavedQueries');
    const checked = this.check(d0.id, input, this.find(this.store.state, d0, id));
    await this.store.transact((s) => {
      const d = this.domain(s, p, domainName, 'update:SavedQueries');
      const old = this.find(s, d, id);
      if (s.savedQueries.of(d.id).some((q) => q.name === checked.name && q.id !== id)) throw new LogsvcError('E_CONFLICT', `name: a saved search named "${checked.name}" already exists in "${d.name}"`);
      return { events: [{ type: 'SavedQuerySaved', query: { ...old, ...checked } }], result: undefined };
    });
    return this.store.state.savedQueries.get(id)!;
  }

  delete(p: Principal, domainName: string, id: string): Promise<void> {
    return this.store.transact((s) => {
      const d = this.domain(s, p, domainName, 'delete:SavedQueries');
      this.find(s, d, id);
      return { events: [{ type: 'SavedQueryDeleted', id }], result: undefined };
    });
  }
}
