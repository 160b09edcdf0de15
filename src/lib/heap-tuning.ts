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

const TUNED: readonly { name: string; value: string }[] = [{ name: 'heap-growing-percent', value: String(HEAP_GROWING_PERCENT) }];

/** V8 accepts `--a-b` and `--a_b` alike. */
function flagName(arg: string): string | null {
  if (!arg.startsWith('--')) return null;
  return arg.slice(2).split('=')[0]!.replaceAll('_', '-');
}

/** The flags to apply: each tuned flag the process was not already given on its command line. */
export function heapFlags(execArgv: readonly string[]): string[] {
  const given = new Set<string>();
  for (const arg of execArgv) {
    const name = flagName(arg);
    if (name !== null) given.add(name);
  }
  return TUNED.filter((f) => !given.has(f.name)).map((f) => `--${f.name}=${f.value}`);
}

/** Applies the tuning to this process; returns the flags it set. */
export function tuneHeap(): string[] {
  const flags = heapFlags(process.execArgv);
  for (const f of flags) setFlagsFromString(f);
  return flags;
}
