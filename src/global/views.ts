/**
 * Views in global state: a named search domain over repositories, each connection with a filter
 * applied to that repository's events, and its own members (a member of the view searches through
 * it without being a member of the repositories). Names share one namespace with repositories
 * (enforced where views and repositories are created).
 */
import type { Membership } from './model.js';

export interface ViewConnection {
  repositoryId: string;
  /** A filter (no aggregate) applied to the repository's events; "" or "*" is everything. */
  filter: string;
}

export interface StoredView {
  id: string;
  name: string;
  description: string;
  connections: ViewConnection[];
  members: Map<string, Membership>;
  createdAt: number;
}

export type ViewEvent =
  | { type: 'ViewSaved'; id: string; name: string; description: string; connections: ViewConnection[]; at: number }
  | { type: 'ViewDeleted'; id: string }
  | { type: 'ViewMemberSet'; viewId: string; userId: string; canAdminMembers: boolean; canDeleteData: boolean }
  | { type: 'ViewMemberRemoved'; viewId: string; userId: string };

export interface ViewSnapshot {
  id: string;
  name: string;
  description: string;
  connections: ViewConnection[];
  members: Membership[];
  createdAt: number;
}

export class ViewIndex {
  private readonly byId = new Map<string, StoredView>();
  private readonly idByName = new Map<string, string>();

  get(id: string): StoredView | undefined {
    return this.byId.get(id);
  }

  byName(name: string): StoredView | undefined {
    const id = this.idByName.get(name);
    return id === undefined ? undefined : this.byId.get(id);
  }

  all(): StoredView[] {
    return [...this.byId.values()];
  }

  apply(e: ViewEvent): void {
    switch (e.type) {
      case 'ViewSaved': {
        const old = this.byId.get(e.id);
        if (old !== undefined) this.idByName.delete(old.name);
        this.byId.set(e.id, { id: e.id, name: e.name, description: e.description, connections: e.connections.map((c) => ({ ...c })), members: old?.members ?? new Map(), createdAt: old?.createdAt ?? e.at });
        this.idByName.set(e.name, e.id);
        return;
      }
      case 'ViewDeleted': {
        const v = this.byId.get(e.id);
        if (v === undefined) return;
        this.byId.delete(e.id);
        this.idByName.delete(v.name);
        return;
      }
      case 'ViewMemberSet':
        this.byId.get(e.viewId)?.members.set(e.userId, { userId: e.userId, canAdminMembers: e.canAdminMembers, canDeleteData: e.canDeleteData });
        return;
      case 'ViewMemberRemoved':
        this.byId.get(e.viewId)?.members.delete(e.userId);
        return;
    }
  }

  /** A deleted repository leaves every view it was connected to. */
  dropRepository(repositoryId: string): void {
    for (const v of this.byId.values()) v.connections = v.connections.filter((c) => c.repositoryId !== repositoryId);
  }

  dropUser(userId: string): void {
    for (const v of this.byId.values()) v.members.delete(userId);
  }

  toSnapshot(): ViewSnapshot[] {
    return this.all().map((v) => ({ ...v, connections: v.connections.map((c) => ({ ...c })), members: [...v.members.values()] }));
  }

  static fromSnapshot(s: readonly ViewSnapshot[] | undefined): ViewIndex {
    const idx = new ViewIndex();
    for (const v of s ?? []) {
      idx.byId.set(v.id, { ...v, connections: v.connections.map((c) => ({ ...c })), members: new Map(v.members.map((m) => [m.userId, { ...m }])) });
      idx.idByName.set(v.name, v.id);
    }
    return idx;
  }
}
