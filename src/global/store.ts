/**
 * The global store: the one place that changes global state. `transact` runs a decision function
 * against the current state with every other transaction excluded, makes the events it returns
 * durable in the log, and only then applies them, so the in-memory state never runs ahead of disk.
 */
import type { Logger } from '../lib/logger.js';
import type { GlobalEvent } from './events.js';
import type { GlobalLog } from './log.js';
import { GlobalState } from './model.js';

export interface Decision<T> {
  events: GlobalEvent[];
  result: T;
}

export class GlobalStore {
  private tail: Promise<unknown> = Promise.resolve();
  private sinceSnapshot = 0;
  private readonly listeners = new Set<(e: GlobalEvent) => void>();
  private failure: Error | null = null;

  private constructor(
    private readonly log: GlobalLog,
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
    const run = this.tail.then(async () => {
      const { events, result } = decide(this.current);
      if (events.length > 0) {
        // One record for the whole transaction: durable all together, or not at all.
        const first = this.current.seq + 1;
        try {
          await this.log.appendBatch(first, events);
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

  private async snapshot(): Promise<void> {
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
    await this.log.close();
  }
}
