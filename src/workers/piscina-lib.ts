/**
 * piscina, required at first use (its CommonJS build): an idle node that has run no task on a
 * thread does not hold it (~0.8 MB of heap; docs/benchmarks.md, "Idle RSS of an empty node, third
 * pass"). The pools (pool.ts) and the query queue (query-queue.ts) are made when first used; the
 * worker side (task-worker.ts) imports it as usual.
 */
import { createRequire } from 'node:module';
import { lazyRequire } from '../lib/lazy-require.js';

export const piscina = lazyRequire<typeof import('piscina')>(createRequire(import.meta.url), 'piscina');
