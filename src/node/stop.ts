/**
 * The node's stop, bounded: each step (close HTTP and wait for in-flight requests, stop the digest,
 * the worker pools, the queue, the global store, the data-dir lock, ...) gets a time bound, and the
 * whole stop gets one too (STOP_LIMIT_MS, documented in docs/hardening.md). A step past its bound is
 * left behind (its work is either durable already, as every acknowledged event is in the queue, or
 * redone at the next start) and named in the log, so a stop that is cut short says where.
 */
import type { Logger } from '../lib/logger.js';

/** Bound of one stop step unless it names its own. */
export const STOP_STEP_MS = 5_000;
/** The whole stop: past it the remaining steps are skipped (the data-dir lock of a dead pid is taken over at the next start). */
export const STOP_LIMIT_MS = 20_000;

export interface StopStep {
  name: string;
  run: () => Promise<void> | void;
  /** This step's bound; STOP_STEP_MS unless given. */
  boundMs?: number;
}

export const stopStep = (name: string, run: () => Promise<void> | void, boundMs?: number): StopStep => (boundMs === undefined ? { name, run } : { name, run, boundMs });

export interface StopReport {
  /** Every step finished within its bound and the whole stop within STOP_LIMIT_MS. */
  clean: boolean;
  ms: number;
  /** Steps that failed, ran past their bound or were skipped, with why. */
  problems: string[];
}

/** Runs `steps` in order, each bounded, all within `limitMs`. Never throws. */
export async function runStopSteps(steps: readonly StopStep[], logger: Logger, limitMs = STOP_LIMIT_MS): Promise<StopReport> {
  const start = Date.now();
  const problems: string[] = [];
  // Set when a step ran to a bound that was what was left of the limit (timers may fire a
  // millisecond early by Date.now(), so the clock alone could leave 1 ms for the next step).
  let usedUp = false;
  for (const s of steps) {
    const left = limitMs - (Date.now() - start);
    if (left <= 0 || usedUp) {
      problems.push(`${s.name}: skipped, the stop had used its ${limitMs} ms`);
      continue;
    }
    const bound = Math.min(s.boundMs ?? STOP_STEP_MS, left);
    const t0 = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      Promise.resolve()
        .then(s.run)
        .then(
          () => 'done' as const,
          (err: unknown) => err as Error,
        ),
      new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), bound))),
    ]);
    clearTimeout(timer);
    const ms = Date.now() - t0;
    if (outcome === 'late') {
      problems.push(`${s.name}: still running after its bound of ${bound} ms; left behind`);
      if (bound === left) usedUp = true;
    }
    else if (outcome !== 'done') problems.push(`${s.name}: failed: ${outcome instanceof Error ? outcome.message : String(outcome)}`);
    logger.debug('stop step', { step: s.name, ms, outcome: outcome === 'done' || outcome === 'late' ? outcome : 'failed' });
  }
  const ms = Date.now() - start;
  for (const p of problems) logger.warn('stop step not clean', { problem: p });
  return { clean: problems.length === 0, ms, problems };
}
