/**
 * Ingest listeners in global state: a TCP or UDP port bound to a repository and a parser
 * (createIngestListenerV3). Every node reads the definitions and runs the listeners meant for it
 * (src/ingest/listeners/manager.ts), so a listener starts and stops without a restart and comes
 * back after one.
 */

export type ListenerProtocol = 'TCP' | 'UDP';

export interface IngestListenerDef {
  id: string;
  name: string;
  repositoryId: string;
  protocol: ListenerProtocol;
  /** The address to bind; "" binds every interface (0.0.0.0), as the product does. */
  bindInterface: string;
  port: number;
  /** A built-in parser's name or a custom parser of the repository. */
  parser: string;
  charset: string;
  /** When set, only the node with this id opens the socket. */
  vHost: number | null;
  createdAt: number;
}

export type ListenerEvent = { type: 'IngestListenerSaved'; listener: IngestListenerDef } | { type: 'IngestListenerDeleted'; id: string };

export class ListenerIndex {
  readonly byId = new Map<string, IngestListenerDef>();

  apply(e: ListenerEvent): void {
    if (e.type === 'IngestListenerSaved') this.byId.set(e.listener.id, { ...e.listener });
    else this.byId.delete(e.id);
  }

  forRepository(repositoryId: string): IngestListenerDef[] {
    return [...this.byId.values()].filter((l) => l.repositoryId === repositoryId).sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
  }

  dropRepository(repositoryId: string): void {
    for (const [id, l] of this.byId) if (l.repositoryId === repositoryId) this.byId.delete(id);
  }

  all(): IngestListenerDef[] {
    return [...this.byId.values()];
  }

  static fromSnapshot(list: IngestListenerDef[] | undefined): ListenerIndex {
    const x = new ListenerIndex();
    for (const l of list ?? []) x.byId.set(l.id, { ...l });
    return x;
  }
}
