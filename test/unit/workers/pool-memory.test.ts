/**
 * The block builder's memory under sustained load: a worker that takes block after block without a
 * pause must still give back what each block's compression allocated.
 *
 * lz4-napi returns its output in a Rust-allocated buffer that a finalizer frees, and finalizers run
 * from the worker's event loop. In piscina's default `atomics: 'sync'` mode a worker that always has
 * a next task never returns to its event loop, so none of that memory came back: the process grew by
 * about the size of every block compressed (past 1.5 GB within a minute at full ingest load).
 */
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { encodeRecord, groupSection, type IngestEvent } from '../../../src/events/index.js';
import type { BlockPart } from '../../../src/digest/block-parts.js';
import { WorkerPool } from '../../../src/workers/pool.js';

const T0 = 1_700_000_000_000;
const BLOCKS = 240;
const IN_FLIGHT = 4;

/**
 * ~1 MB of events whose raw strings do not compress, so each block's LZ4 output is ~1 MB too:
 * random punctuation, which has no tokens, so the skip index costs next to nothing.
 */
const PUNCTUATION = '!#$%&()*+,-./:;<=>?@[]^_`{|}~ ';
function incompressibleBlock(): BlockPart[] {
  const noise = (n: number): string => Array.from(randomBytes(n), (b) => PUNCTUATION[b % PUNCTUATION.length]).join('');
  const events: IngestEvent[] = Array.from({ length: 250 }, (_, i) => ({ timestamp: T0 + i, timezone: 'Z', rawstring: noise(4000), fields: {} }));
  const { payload, summary } = encodeRecord({ repo: 'r', at: T0, groups: [{ ds: 'a', tags: {}, events }] });
  return [{ events: new Uint8Array(groupSection(payload, summary, 0)), offset: 0, base: 0, skip: 0, at: T0 }];
}

t.test('back-to-back block builds do not keep their compressed output alive', async (t) => {
  const pool = new WorkerPool({ threads: 1 });
  t.teardown(() => pool.close());
  const parts = incompressibleBlock();
  const first = await pool.encode(parts);
  t.ok(first.bytes.length > 900_000, `a block of ${first.bytes.length} bytes (incompressible)`);

  // Keep the worker busy: IN_FLIGHT tasks queued at all times, so it never waits for a task.
  const run = async (n: number): Promise<void> => {
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next++ < n) await pool.encode(parts);
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  };
  await run(40); // warm-up: heaps and pools at their working size
  const before = process.memoryUsage().rss;
  await run(BLOCKS);
  const grown = process.memoryUsage().rss - before;
  const compressed = BLOCKS * first.bytes.length;
  t.ok(grown < compressed / 3, `RSS grew ${(grown / 1e6).toFixed(0)} MB over ${BLOCKS} blocks (${(compressed / 1e6).toFixed(0)} MB compressed)`);
});
