/**
 * Fair admission of queries (issue 24, defect 10). A query waits for a slot instead of being refused
 * at once, within bounds:
 * - global: at most `maxConcurrent` run at once (query.max_concurrent);
 * - per user: at most `maxPerUser` of one user's queries run at once (query.max_concurrent_per_user),
 *   so one client's burst cannot take every slot;
 * - by cost: a query whose estimated scan is over `largeBytes` (query.large_query_bytes) is large;
 *   large queries together may hold at most maxConcurrent - reservedSmall slots, so the others
 *   always find room for small ones, and when a slot frees the oldest small waiter goes first;
 * - a deadline: a query that has waited `queueTimeoutMs` (query.queue_timeout_ms) is refused with
 *   429 and Retry-After; at most `maxQueued` wait at once (more are refused at once).
 * Queries started without waiting (query jobs, alerts, live refreshes) take a slot now or get 429.
 */
import { LogsvcError } from '../lib/errors.js';

export interface SchedulerOptions {
  maxConcurrent: number;
  maxPerUser: number;
  largeBytes: number;
  queueTimeoutMs: number;
  maxQueued: number;
}

export type Release = () => void;

interface Waiter {
  user: string;
  large: boolean;
  resolve: (release: Release) => void;
  reject: (err: LogsvcError) => void;
  timer: NodeJS.Timeout;
}

export class QueryScheduler {
  private running = 0;
  private runningLarge = 0;
  private readonly byUser = new Map<string, number>();
  private readonly waiting: Waiter[] = [];

  constructor(private readonly opts: SchedulerOptions) {}

  /** Slots large queries may hold together: at least one, and at least one slot left for small ones when there are two or more. */
  private get largeSlots(): number {
    return Math.max(1, this.opts.maxConcurrent - Math.max(1, Math.floor(this.opts.maxConcurrent / 4)));
  }

  private fits(user: string, large: boolean): boolean {
    if (this.running >= this.opts.maxConcurrent) return false;
    if ((this.byUser.get(user) ?? 0) >= this.opts.maxPerUser) return false;
    if (large && this.runningLarge >= this.largeSlots) return false;
    return true;
  }

  private take(user: string, large: boolean): Release {
    this.running++;
    if (large) this.runningLarge++;
    this.byUser.set(user, (this.byUser.get(user) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      if (large) this.runningLarge--;
      const n = (this.byUser.get(user) ?? 1) - 1;
      if (n === 0) this.byUser.delete(user);
      else this.byUser.set(user, n);
      this.next();
    };
  }

  /** Hands freed slots to waiters: small ones first, each class oldest first. */
  private next(): void {
    for (const large of [false, true]) {
      for (let i = 0; i < this.waiting.length; ) {
        const w = this.waiting[i]!;
        if (w.large === large && this.fits(w.user, w.large)) {
          this.waiting.splice(i, 1);
          clearTimeout(w.timer);
          w.resolve(this.take(w.user, w.large));
        } else i++;
      }
    }
  }

  /** A slot now, or 429. */
  tryAcquire(user: string, large = false): Release {
    if (!this.fits(user, large)) throw this.busy(`${this.running} queries are running`);
    return this.take(user, large);
  }

  /** A slot, waiting in line for at most queueTimeoutMs; 429 with Retry-After past that. */
  acquire(user: string, large: boolean): Promise<Release> {
    if (this.waiting.length === 0 && this.fits(user, large)) return Promise.resolve(this.take(user, large));
    if (this.waiting.length >= this.opts.maxQueued) return Promise.reject(this.busy(`${this.waiting.length} queries are already waiting`));
    return new Promise<Release>((resolve, reject) => {
      const w: Waiter = {
        user,
        large,
        resolve,
        reject,
        timer: setTimeout(() => {
          const i = this.waiting.indexOf(w);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(this.busy(`waited ${this.opts.queueTimeoutMs} ms for a query slot (query.queue_timeout_ms)`));
        }, this.opts.queueTimeoutMs),
      };
      // In line behind those already waiting (next() serves small ones first, each class in order).
      this.waiting.push(w);
      this.next();
    });
  }

  private busy(why: string): LogsvcError {
    return new LogsvcError('E_TOO_MANY_REQUESTS', `${why}; this node runs at most ${this.opts.maxConcurrent} queries at once (query.max_concurrent), ${this.opts.maxPerUser} per user (query.max_concurrent_per_user); retry shortly`);
  }

  stats(): { running: number; runningLarge: number; waiting: number } {
    return { running: this.running, runningLarge: this.runningLarge, waiting: this.waiting.length };
  }
}
