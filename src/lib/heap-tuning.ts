/**
 * V8 heap tuning of a node process, applied by `logsvc node` before the node starts.
 *
 * The HTTP thread keeps a small heap (~20 MB live) but adopts tens of MB/s of short-lived request
 * state and records. With V8's default growth the old generation's limit stays so close to its
 * live size that an incremental marking starts every 100–200 ms at full load (each Mark-Compact
 * pausing the thread 5–12 ms and keeping the GC helper threads busy). Letting the heap grow 5x its
 * live size before the next full collection cut those collections 4x, the acknowledgement p99 at
 * half load from ~22 to ~15 ms and raised ingest throughput ~5 % (docs/benchmarks.md); the cost is
 * tens of MB of RSS. V8 reads this flag whenever it sizes a heap, so setting it at run time works,
 * and for every thread (flags are per process).
 *
 * An operator's own value wins: `node --heap-growing-percent=N bin/logsvc node` (Node does not allow
 * this flag in NODE_OPTIONS).
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';

/** Old-generation growth after a full collection, in percent of the live size. */
export const HEAP_GROWING_PERCENT = 400;

const FLAG = 'heap-growing-percent';

/** V8 accepts `--a-b` and `--a_b` alike. */
function flagName(arg: string): string | null {
  if (!arg.startsWith('--')) return null;
  return arg.slice(2).split('=')[0]!.replaceAll('_', '-');
}

/** The flags to apply: none when the process's command line already gives the growth. */
export function heapFlags(execArgv: readonly string[]): string[] {
  return execArgv.some((arg) => flagName(arg) === FLAG) ? [] : [`--${FLAG}=${HEAP_GROWING_PERCENT}`];
}

/**
 * Bytes of garbage the HTTP thread's heap may gather beyond its live size before a full
 * collection, once that is less than HEAP_GROWING_PERCENT allows (issue 24). 5x a small live heap
 * is tens of MB; 5x the heap of queries holding their results (up to query.max_total_query_memory_bytes
 * on this thread) was gigabytes of RSS that no budget counted: 8 worst-case queries took the node to
 * 4.2 GB.
 */
export const HEAP_SLACK_BYTES = 512 * 1024 * 1024;
/** The growth is never set below this (a collection per few percent of growth costs more than it saves). */
export const MIN_HEAP_GROWING_PERCENT = 25;

/**
 * The growth for a heap of `usedBytes` live: HEAP_GROWING_PERCENT while that is at most
 * HEAP_SLACK_BYTES, then what keeps the slack at HEAP_SLACK_BYTES (at least MIN_HEAP_GROWING_PERCENT).
 */
export function growingPercentFor(usedBytes: number): number {
  const pct = Math.floor((100 * HEAP_SLACK_BYTES) / Math.max(1, usedBytes));
  return Math.max(MIN_HEAP_GROWING_PERCENT, Math.min(HEAP_GROWING_PERCENT, pct));
}

/** How often the growth is adapted to the heap's size. */
const ADAPT_MS = 200;

/**
 * Applies the tuning to this process; returns the flags it set. Unless the operator gave the
 * growth, it is then adapted to the HTTP thread's heap every ADAPT_MS (growingPercentFor), so the
 * garbage a large live heap may gather stays near HEAP_SLACK_BYTES. V8 reads the flag when it sizes
 * the heap after each full collection; it applies to every thread.
 */
export function tuneHeap(): string[] {
  const flags = heapFlags(process.execArgv);
  for (const f of flags) setFlagsFromString(f);
  if (flags.length > 0) {
    let current = HEAP_GROWING_PERCENT;
    setInterval(() => {
      const pct = growingPercentFor(getHeapStatistics().used_heap_size);
      // Changed in steps of a fifth or more: no flag churn while the heap breathes.
      if (Math.abs(pct - current) * 5 < current && pct !== HEAP_GROWING_PERCENT) return;
      if (pct === current) return;
      current = pct;
      setFlagsFromString(`--${FLAG}=${pct}`);
    }, ADAPT_MS).unref();
  }
  return flags;
}

const GROWTH_FLAG = 'semi-space-growth-factor';
/** V8's default growth of the young generation (new space) when a scavenge finds it too small. */
export const DEFAULT_SEMI_SPACE_GROWTH = 2;

/**
 * Keeps the young generation at its initial size while the node starts; returns the function that
 * lets it grow again (called once the node serves).
 *
 * Loading the node's modules and building its services is a burst of allocations that survive
 * (module code, schemas, registries); with V8's default growth each scavenge doubles the new space,
 * up to two 8 MiB semi-spaces, and an idle node keeps them resident: about 12 MB of an empty
 * node's RSS (docs/benchmarks.md, "Idle RSS"). Held at growth 1 the start-up's survivors are
 * promoted instead, where they belong; once released, the new space grows under load exactly as
 * before (V8 reads the factor at each scavenge), so ingest and queries get the same young
 * generation. An operator's own `--semi-space-growth-factor` or `--max-semi-space-size`/`--min-semi-space-size` wins.
 */
export function holdYoungGeneration(execArgv: readonly string[] = process.execArgv): () => void {
  const own = execArgv.some((arg) => {
    const f = flagName(arg);
    return f === GROWTH_FLAG || f === 'max-semi-space-size' || f === 'min-semi-space-size';
  });
  if (own) return () => {};
  setFlagsFromString(`--${GROWTH_FLAG}=1`);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    setFlagsFromString(`--${GROWTH_FLAG}=${DEFAULT_SEMI_SPACE_GROWTH}`);
  };
}
