/**
 * The data dir stays near the size of its segments once the digest has settled: a node ingests
 * across every partition, writes every block to segments, and then the digest queue keeps only a
 * small bounded remainder per partition (a wholly digested file is rolled over and removed), so
 * the whole data dir is at most 1.2x the segments plus a fixed allowance. A size bound, not a
 * timing assertion: the test waits (bounded) for the digest to settle and the queue to shrink.
 */
import t from 'tap';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { RESERVE_BYTES } from '../../src/storage/reserve.js';
import { api } from '../helpers/http.js';
import { startNode } from '../helpers/node-process.js';
import { createRepo, ingestStructured, queryJson, type KnownEvent } from '../helpers/query.js';

t.setTimeout(240_000);

const PARTITIONS = 4;
const CONFIG = ['[digest]', 'flush_block_seconds = 1', `partitions = ${PARTITIONS}`, ''].join('\n');
const T0 = Date.parse('2026-11-20T10:00:00Z');
/** Below this a wholly digested queue file is not rolled over (ROLL_DIGESTED_MIN_BYTES), plus its header. */
const LEFT_PER_PARTITION = 64 * 1024 + 8;
/** What a data dir holds besides segments and queue: the disk-full reserve, and (generously) global state, keys, checkpoints. */
const FIXED_ALLOWANCE = RESERVE_BYTES + 1024 * 1024;

/** Allocated bytes (as du counts) under `dir`, and those of files matching `match`. */
async function du(dir: string, match: (path: string) => boolean = () => true): Promise<number> {
  let n = 0;
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const p = join(e.parentPath, e.name);
    if (!match(p)) continue;
    try {
      n += (await stat(p)).blocks * 512;
    } catch {
      // removed while we looked
    }
  }
  return n;
}

t.test('after the digest settles the data dir is within 1.2x of its segments plus a small queue', async (t) => {
  const node = await startNode(t, { config: CONFIG });
  const repo = await createRepo(node.url, node.adminToken, 'footprint');
  // ~12 MB of queue records: every partition's file passes the roll threshold many times over.
  const events: KnownEvent[] = Array.from({ length: 40_000 }, (_, i) => ({
    timestamp: T0 + i,
    rawstring: `10.1.${i % 200}.${i % 250} - - "GET /api/items/${i}?q=${(i * 7919) % 100_003} HTTP/1.1" ${200 + (i % 5)} ${(i * 31) % 50_000} "agent-${i % 17}" request ${i} done`,
    attributes: { client: `10.1.${i % 200}.${i % 250}`, status: String(200 + (i % 5)), n: i },
    tags: { host: `web-${i % 3}` },
  }));
  await ingestStructured(node.url, repo.ingestToken, events, 250);
  const queueDir = join(node.dataDir, 'queue');
  const peakQueue = await du(queueDir);
  t.ok(peakQueue > PARTITIONS * LEFT_PER_PARTITION, `the queue held ${peakQueue} bytes after ingest`);

  // Wait (bounded) for every block in segments and the queue reclaimed.
  const deadline = Date.now() + 180_000;
  let queueBytes = peakQueue;
  for (;;) {
    const m = await api(node.url, '/api/v1/metrics', { token: node.adminToken });
    const doc = JSON.parse(m.text) as { undigestedBytes: number; pendingBlockBytes: number };
    queueBytes = await du(queueDir);
    if (doc.undigestedBytes === 0 && doc.pendingBlockBytes === 0 && queueBytes <= PARTITIONS * (LEFT_PER_PARTITION + 4096)) break;
    if (Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const segments = await du(join(node.dataDir, 'segments'), (p) => p.endsWith('.seg'));
  const whole = await du(node.dataDir);
  t.comment(`segments ${segments} B, queue ${queueBytes} B (peak ${peakQueue}), whole data dir ${whole} B`);
  t.ok(queueBytes <= PARTITIONS * (LEFT_PER_PARTITION + 4096), `the queue keeps at most one small file per partition: ${queueBytes} B`);
  t.ok(whole <= 1.2 * segments + queueBytes + FIXED_ALLOWANCE, `whole data dir ${whole} B <= 1.2 x segments ${segments} B + queue + ${FIXED_ALLOWANCE} B`);

  // Every event is still there, from segments.
  const rows = (await queryJson(node.url, 'footprint', { queryString: 'count()', start: T0 - 60_000, end: T0 + 3_600_000 }, { token: node.adminToken })) as { _count: string }[];
  t.equal(Number(rows[0]?._count), events.length, 'every event is counted after the queue was reclaimed');

  // And after a restart, nothing is replayed twice or lost.
  t.equal(await node.stop(), 0);
  const again = await startNode(t, { dataDir: node.dataDir, config: CONFIG });
  const rows2 = (await queryJson(again.url, 'footprint', { queryString: 'count()', start: T0 - 60_000, end: T0 + 3_600_000 }, { token: again.adminToken })) as { _count: string }[];
  t.equal(Number(rows2[0]?._count), events.length, 'the same count after a restart');
  await again.stop();
});
