/**
 * The global store: the one place that changes global state. `transact` runs a decision function
 * against the current state with every other transaction of this node excluded.
 *
 * Embedded (one node): the events it returns are made durable in the log and only then applied, so
 * the in-memory state never runs ahead of disk.
 *
 * Shared (a cluster, `openShared`): propose, then apply. The events go to the shared log as a
 * proposal carrying the `decisions` count of the state they were decided on; every node applies
 * proposals in log order, and a proposal applies only if no other decision was applied in between.
 * The proposer waits until it reads its own proposal back: applied, the transaction answers (read
 * your own writes); passed over, it decides again on the newer state, where a racing create now
 * finds the name taken. `publish` sends reports (digest progress, epochs) that apply by their own
 * rules, whatever came before.
 */
import { LogsvcError } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import type { GlobalEvent } from './events.js';
import type { GlobalLog } from './log.js';
import { GlobalState } from './model.js';
import type { GlobalProposal, SharedGlobalLog } from './shared-log.js';

/** Decide-propose rounds one transaction may take before it gives up (heavy contention). */
const MAX_PROPOSAL_ROUNDS = 50;
/** How long a proposer waits to read its own proposal back before it answers 503. */
const PROPOSAL_WAIT_MS = 30_000;

interface SharedMode {
  log: SharedGlobalLog;
  proposer: string;
  nextId: number;
  /** Own proposals not yet read back: id -> settle(applied). */
  pending: Map<number, (applied: boolean) => void>;
  /** Log position of the next proposal to apply. */
  position: number;
}

export interface Decision<T> {
  events: GlobalEvent[];
  result: T;
}

export class GlobalStore {
  private tail: Promise<unknown> = Promise.resolve();
  private sinceSnapshot = 0;
  private readonly listeners = new Set<(e: GlobalEvent) => void>();
  private failure: Error | null = null;
  private shared: SharedMode | null = null;

  private constructor(
    private readonly log: GlobalLog | null,
    private current: GlobalState,
    private readonly snapshotEvery: number,
    private readonly logger: Logger,
  ) {}

  static async open(log: GlobalLog, opts: { snapshotEvery: number; logger: Logger }): Promise<GlobalStore> {
    const loaded = await log.open();
    for (const r of loaded.repairs) opts.logger.error('global state repaired on open', { detail: r });
    const state = loaded.snapshot === null ? new GlobalState() : GlobalState.fromSnapshot(loaded.snapshot);
    for (const { seq, event } of loaded.events) state.apply(event, seq);
    const store = new GlobalStore(log, state, opts.snapshotEvery, opts.logger);
    store.sinceSnapshot = loaded.events.length;
    return store;
  }

  /**
   * Opens the cluster's shared state: this node's snapshot, then every proposal after it, in order;
   * resolves once caught up with the log as it was at the call. Proposals keep arriving after that.
   */
  static async openShared(log: SharedGlobalLog, opts: { snapshotEvery: number; logger: Logger; proposer: string }): Promise<GlobalStore> {
    const opened = await log.open();
    const state = opened.snapshot === null ? new GlobalState() : GlobalState.fromSnapshot(opened.snapshot);
    const store = new GlobalStore(null, state, opts.snapshotEvery, opts.logger);
    const shared: SharedMode = { log, proposer: opts.proposer, nextId: 0, pending: new Map(), position: opened.position };
    store.shared = shared;
    await log.follow(opened.position, (p, pos) => store.applyProposal(shared, p, pos));
    return store;
  }

  /** Whether this store is a cluster's shared state. */
  get isShared(): boolean {
    return this.shared !== null;
  }

  private applyProposal(shared: SharedMode, p: GlobalProposal, pos: number): void {
    if (pos < shared.position) return; // delivered twice (a consumer restarted): applied already
    shared.position = pos + 1;
    const applies = p.base === null || p.base === this.current.decisions;
    if (applies) {
      for (const event of p.events) {
        this.current.apply(event, this.current.seq + 1);
        this.sinceSnapshot++;
        for (const l of this.listeners) {
          try {
            l(event);
          } catch (err) {
            this.logger.error('global event listener failed', { event: event.type, error: (err as Error).message });
          }
        }
      }
      if (p.base !== null) this.current.decisions++;
    }
    if (p.proposer === shared.proposer) {
      const settle = shared.pending.get(p.id);
      shared.pending.delete(p.id);
      settle?.(applies);
    }
    if (this.sinceSnapshot >= this.snapshotEvery) {
      this.sinceSnapshot = 0;
      const data = this.current.toSnapshot();
      shared.log.writeSnapshot(data, shared.position).catch((err: unknown) => {
        this.logger.error('global state snapshot failed', { error: (err as Error).message });
      });
    }
  }

  /**
   * Sends report events (digest progress, epochs, holdings) to the shared log; they apply by their
   * own rules at apply time, not against a decided state. Resolves once they are durable in the
   * log. On a single node they are simply applied through the embedded log.
   */
  async publish(events: GlobalEvent[]): Promise<void> {
    if (events.length === 0) return;
    const shared = this.shared;
    if (shared === null) {
      await this.transact(() => ({ events, result: undefined }));
      return;
    }
    await shared.log.propose({ proposer: shared.proposer, id: ++shared.nextId, base: null, events });
  }

  /** The first failed append, if any: from then on no change can be made durable. */
  get writeFailure(): Error | null {
    return this.failure;
  }

  get state(): GlobalState {
    return this.current;
  }

  /** Called after each applied event (in order). */
  onApplied(listener: (e: GlobalEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  transact<T>(decide: (state: GlobalState) => Decision<T>): Promise<T> {
    const shared = this.shared;
    if (shared !== null) {
      const run = this.tail.then(() => this.transactShared(shared, decide));
      this.tail = run.catch(() => undefined);
      return run;
    }
    const log = this.log!;
    const run = this.tail.then(async () => {
      const { events, result } = decide(this.current);
      if (events.length > 0) {
        // One record for the whole transaction: durable all together, or not at all.
        const first = this.current.seq + 1;
        try {
          await log.appendBatch(first, events);
        } catch (err) {
          // A change refused for a full disk leaves the log usable (src/global/embedded-log.ts).
          if ((err as { code?: string }).code !== 'E_DISK_FULL') this.failure ??= err as Error;
          throw err;
        }
        events.forEach((event, i) => {
          this.current.apply(event, first + i);
          this.sinceSnapshot++;
          for (const l of this.listeners) l(event);
        });
      }
      if (this.sinceSnapshot >= this.snapshotEvery) await this.snapshot();
      return result;
    });
    // The chain continues after a failed transaction; the failure goes to this caller only.
    this.tail = run.catch(() => undefined);
    return run;
  }

  /**
   * A cluster: waits until this node has applied every change any node had completed when called
   * (requests that read or change global state call it first: what was done on another node is
   * seen here). A single node has nothing to wait for.
   */
  async sync(): Promise<void> {
    if (this.shared !== null) await this.catchUp(this.shared);
  }

  /**
   * Waits (at most `timeoutMs`) until this node has applied global events up to sequence number
   * `seq` (a cluster query fixes one: every node answers as of it); whether it got there.
   */
  async waitForSeq(seq: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.current.seq < seq) {
      if (Date.now() >= deadline) return false;
      await new Promise((r) => setTimeout(r, 5));
    }
    return true;
  }

  /**
   * Waits until this node has applied every proposal the log held when called: a decision made after
   * it sees every change any node had completed (a mutation on one node, then one on another that
   * depends on it, works).
   */
  private async catchUp(shared: SharedMode): Promise<void> {
    let end: number;
    try {
      end = await shared.log.end();
    } catch (err) {
      // Kafka cannot say where the topic ends (it is down): go on with what this node has. Reads
      // are served as they are; a change decided on a stale state is passed over when it reaches
      // the topic and decided again (and proposing fails anyway while Kafka is down).
      this.logger.debug('global state: the end of global-events is unknown; deciding on the local state', { error: (err as Error).message });
      return;
    }
    // Bounded: a node far behind answers from what it has rather than holding the request.
    const deadline = Date.now() + 5000;
    while (shared.position < end && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  }

  private async transactShared<T>(shared: SharedMode, decide: (state: GlobalState) => Decision<T>): Promise<T> {
    await this.catchUp(shared);
    for (let round = 0; round < MAX_PROPOSAL_ROUNDS; round++) {
      const base = this.current.decisions;
      const { events, result } = decide(this.current);
      if (events.length === 0) return result;
      const id = ++shared.nextId;
      let timer: NodeJS.Timeout | undefined;
      const outcome = new Promise<boolean>((resolve, reject) => {
        shared.pending.set(id, resolve);
        timer = setTimeout(() => {
          shared.pending.delete(id);
          reject(new LogsvcError('E_UNAVAILABLE', `global state: the change was sent but not read back within ${PROPOSAL_WAIT_MS / 1000} s; it may still apply`));
        }, PROPOSAL_WAIT_MS);
      });
      outcome.catch(() => undefined);
      try {
        await shared.log.propose({ proposer: shared.proposer, id, base, events });
      } catch (err) {
        shared.pending.delete(id);
        clearTimeout(timer);
        throw new LogsvcError('E_UNAVAILABLE', `global state cannot be written: ${(err as Error).message}`);
      }
      try {
        if (await outcome) return result;
      } finally {
        clearTimeout(timer);
      }
      // Passed over: another decision came first. Decide again on the state that includes it.
    }
    throw new LogsvcError('E_UNAVAILABLE', `global state: the change lost ${MAX_PROPOSAL_ROUNDS} races in a row to other nodes' changes; try again`);
  }

  private async snapshot(): Promise<void> {
    if (this.log === null) return;
    try {
      await this.log.writeSnapshot(this.current.toSnapshot());
      this.sinceSnapshot = 0;
    } catch (err) {
      // The log still holds every event; a failed snapshot only costs replay time at the next start.
      this.logger.error('global state snapshot failed', { error: (err as Error).message });
    }
  }

  async close(): Promise<void> {
    await this.tail;
    if (this.shared !== null) {
      await this.shared.log.close();
      return;
    }
    await this.log!.close();
  }
}
