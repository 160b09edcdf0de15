/**
 * Event redaction tasks in global state (the product's `redactEvents`): a request to remove, from a
 * repository, the events ingested before it that its query matches within its time range. The task
 * is decided once here; every node that holds segments of the repository rewrites its own and
 * reports when it is done (src/redaction). Bounds are constants, so every replay ends the same.
 */

export interface RedactionNodeResult {
  at: number;
  segmentsRewritten: number;
  eventsRedacted: number;
  error: string | null;
}

export interface RedactionTask {
  id: string;
  repositoryId: string;
  /** The events' time range, epoch ms, both ends included. */
  start: number;
  end: number;
  query: string;
  userMessage: string | null;
  createdBy: string | null;
  /** Events ingested after this are never redacted by the task. */
  createdAt: number;
  cancelledAt: number | null;
  /** Node id -> its outcome, once it has rewritten every segment it holds that the task covers. */
  nodes: Map<number, RedactionNodeResult>;
}

export type RedactionEvent =
  | { type: 'RedactionRequested'; task: Omit<RedactionTask, 'nodes' | 'cancelledAt'> }
  | ({ type: 'RedactionNodeDone'; id: string; node: number } & RedactionNodeResult)
  | { type: 'RedactionCancelled'; id: string; at: number };

/** Tasks kept per repository; the oldest finished ones are forgotten beyond it. */
export const MAX_REDACTIONS_PER_REPOSITORY = 100;

export interface RedactionSnapshot {
  tasks: (Omit<RedactionTask, 'nodes'> & { nodes: [number, RedactionNodeResult][] })[];
}

export class RedactionState {
  /** Insertion order = creation order. */
  readonly tasks = new Map<string, RedactionTask>();

  of(repositoryId: string): RedactionTask[] {
    return [...this.tasks.values()].filter((t) => t.repositoryId === repositoryId);
  }

  apply(e: RedactionEvent): void {
    switch (e.type) {
      case 'RedactionRequested': {
        if (this.tasks.has(e.task.id)) return;
        this.tasks.set(e.task.id, { ...e.task, cancelledAt: null, nodes: new Map() });
        this.prune(e.task.repositoryId);
        return;
      }
      case 'RedactionNodeDone': {
        const t = this.tasks.get(e.id);
        if (t === undefined || t.nodes.has(e.node)) return;
        t.nodes.set(e.node, { at: e.at, segmentsRewritten: e.segmentsRewritten, eventsRedacted: e.eventsRedacted, error: e.error });
        return;
      }
      case 'RedactionCancelled': {
        const t = this.tasks.get(e.id);
        if (t !== undefined && t.cancelledAt === null) t.cancelledAt = e.at;
        return;
      }
      default: {
        const never: never = e;
        throw new Error(`unknown redaction event ${JSON.stringify(never)}`);
      }
    }
  }

  /** Forgets the oldest tasks of the repository beyond the bound (a task still wanted by a node too: it is its oldest). */
  private prune(repositoryId: string): void {
    const mine = this.of(repositoryId);
    for (const t of mine.slice(0, Math.max(0, mine.length - MAX_REDACTIONS_PER_REPOSITORY))) this.tasks.delete(t.id);
  }

  dropRepository(repositoryId: string): void {
    for (const t of this.of(repositoryId)) this.tasks.delete(t.id);
  }

  toSnapshot(): RedactionSnapshot {
    return { tasks: [...this.tasks.values()].map((t) => ({ ...t, nodes: [...t.nodes] })) };
  }

  loadSnapshot(s: RedactionSnapshot | undefined): void {
    for (const t of s?.tasks ?? []) this.tasks.set(t.id, { ...t, nodes: new Map(t.nodes) });
  }
}
