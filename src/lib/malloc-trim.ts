/**
 * Giving the C allocator's free pages back to the kernel (native/malloc_trim.cc): the one importer
 * of that module. Where it was not built, or with LOGSVC_NATIVE=off, `trimMalloc` does nothing and
 * returns false: the memory stays with the process, as it did before.
 */
import { loadNative } from './native-module.js';

interface NativeModule {
  /** glibc malloc_trim(0): true when memory was released. */
  trim(): boolean;
}

let loaded: { module: NativeModule | null; why: string | null } | null = null;

/** Why the module is missing (null: it is loaded); loads it on first call. */
export function mallocTrimUnavailable(): string | null {
  loaded ??= loadNative<NativeModule>('malloc_trim.node');
  return loaded.why;
}

/** Releases every whole free page of every malloc arena; true when some was released. */
export function trimMalloc(): boolean {
  return mallocTrimUnavailable() === null ? (loaded!.module as NativeModule).trim() : false;
}

/** How long after a node serves its first trim runs: start-up's concurrent compile and GC work is over by then. */
export const SETTLE_TRIM_MS = 1_000;

/**
 * Trims once, SETTLE_TRIM_MS after the node serves (an unreferenced timer: it never keeps a
 * stopping process alive). Returns the timer so a caller can cancel it.
 */
export function trimAfterStart(delayMs: number = SETTLE_TRIM_MS): NodeJS.Timeout {
  return setTimeout(() => void trimMalloc(), delayMs).unref();
}
