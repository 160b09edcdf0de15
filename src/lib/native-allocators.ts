/**
 * Settings for the allocators inside native dependencies, applied by `logsvc node` before any of
 * them loads (src/cli/run-node.ts).
 *
 * @node-rs/crc32 and lz4-napi are Rust modules built with mimalloc. At load each reserves a 32 MiB
 * segment, advises it MADV_HUGEPAGE and touches it: with transparent huge pages on (even in the
 * kernel's "madvise" mode) that is a 2 MiB huge page each for a few KB of allocations, 4 MB of an
 * idle node's RSS (docs/benchmarks.md, "Idle RSS of an empty node"). mimalloc reads its options
 * from the environment when it starts, so they are set here, where the node's process is the
 * only reader. An operator's own MIMALLOC_* value wins.
 */

/** mimalloc options (its documented environment variables) and the values a node uses. */
export const MIMALLOC_ENV: Readonly<Record<string, string>> = {
  // Older mimalloc (lz4-napi): no MADV_HUGEPAGE on its segments.
  MIMALLOC_ALLOW_LARGE_OS_PAGES: '0',
  // Newer mimalloc (@node-rs/crc32): no transparent huge pages for its memory.
  MIMALLOC_ALLOW_THP: '0',
};

/** Sets what the environment does not already say; returns the names it set. */
export function settleNativeAllocators(env: NodeJS.ProcessEnv = process.env): string[] {
  const set: string[] = [];
  for (const [k, v] of Object.entries(MIMALLOC_ENV)) {
    if (env[k] !== undefined) continue;
    env[k] = v;
    set.push(k);
  }
  return set;
}
