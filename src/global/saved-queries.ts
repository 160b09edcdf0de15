/**
 * Saved searches ("saved queries" in the product's GraphQL) in global state: per search domain (a
 * repository or a view), by id, each with a name unique in its domain. Queries call them as
 * `$name()` (src/query/saved-calls.ts).
 */

export interface StoredSavedQuery {
  id: string;
  /** The repository's or view's id. */
  domainId: string;
  name: string;
  queryString: string;
  /** The time range and liveness saved with it, as given (shown, not applied to `$name()` calls). */
  start: string;
  end: string;
  isLive: boolean;
  createdAt: number;
}

export type SavedQueryEvent = { type: 'SavedQuerySaved'; query: StoredSavedQuery } | { type: 'SavedQueryDeleted'; id: string };

export class SavedQueryIndex {
  private readonly byId = new Map<string, StoredSavedQuery>();

  get(id: string): StoredSavedQuery | undefined {
    return this.byId.get(id);
  }

  of(domainId: string): StoredSavedQuery[] {
    return [...this.byId.values()].filter((q) => q.domainId === domainId);
  }

  byName(domainId: string, name: string): StoredSavedQuery | undefined {
    for (const q of this.byId.values()) if (q.domainId === domainId && q.name === name) return q;
    return undefined;
  }

  apply(e: SavedQueryEvent): void {
    if (e.type === 'SavedQuerySaved') this.byId.set(e.query.id, { ...e.query });
    else this.byId.delete(e.id);
  }

  dropDomain(domainId: string): void {
    for (const q of this.of(domainId)) this.byId.delete(q.id);
  }

  all(): StoredSavedQuery[] {
    return [...this.byId.values()].map((q) => ({ ...q }));
  }

  static fromSnapshot(list: readonly StoredSavedQuery[] | undefined): SavedQueryIndex {
    const idx = new SavedQueryIndex();
    for (const q of list ?? []) idx.byId.set(q.id, { ...q });
    return idx;
  }
}
