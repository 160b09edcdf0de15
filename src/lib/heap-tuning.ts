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
import { setFlagsFromString } from 'node:v8';

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

/** Applies the tuning to this process; returns the flags it set. */
export function tuneHeap(): string[] {
  const flags = heapFlags(process.execArgv);
  for (const f of flags) setFlagsFromString(f);
  return flags;
}
