/**
 * Queries while the digest keeps sealing and writing blocks: a snapshot of the digest's memory
 * shares block parts with blocks being encoded at the same moment. Every query must answer (no
 * 500: the parts were once transferred to the encoder and left detached for the query's clone),
 * and every answer must count each acknowledged event exactly once — never fewer than were
 * acknowledged before it started, never more than were sent.
 */
import t from 'tap';
import { startNode } from '../helpers/node-process.js';
import { countOf, createRepo, ingestStructured, type KnownEvent } from '../helpers/query.js';

t.setTimeout(240_000);

// Tiny blocks sealed every second: blocks move from memory to segments all through the test.
const CONFIG = ['[health]', 'grace_period_seconds = 600', '[digest]', 'partitions = 2', 'worker_threads = 2', 'flush_block_seconds = 1', 'block_target_bytes = 1024', ''].join('\n');
const node = await startNode(t, { config: CONFIG });
const repo = await createRepo(node.url, node.adminToken, 'busy');

const now = Date.now();
let sent = 0;
const batch = (n: number): KnownEvent[] =>
  Array.from({ length: n }, (_, i) => ({ timestamp: now - 60_000 + ((sent + i) % 50_000), rawstring: `busy event ${sent + i} status=${(sent + i) % 3 === 0 ? 500 : 200}`, attributes: { n: sent + i, status: (sent + i) % 3 === 0 ? 500 : 200 }, tags: { host: `h${(sent + i) % 4}` } }));

t.test('queries racing block writes answer, and count each event once', async (t) => {
  let acknowledged = 0;
  const deadline = Date.now() + 60_000;
  for (let round = 0; round < 40 && Date.now() < deadline; round++) {
    const events = batch(60);
    const ingest = ingestStructured(node.url, repo.ingestToken, events, 20).then(() => {
      acknowledged += events.length;
    });
    sent += events.length;
    const before = acknowledged;
    // Several queries at once while the batch is acknowledged and blocks are sealed and written.
    const counts = await Promise.all([countOf(node.url, repo.name, node.adminToken), countOf(node.url, repo.name, node.adminToken, 'status=500'), countOf(node.url, repo.name, node.adminToken, '', { queryString: 'timechart(span=1m) | sum(_count, as=_count)' })]);
    await ingest;
    t.ok(counts[0] >= before && counts[0] <= sent, `round ${round}: count ${counts[0]} within [${before}, ${sent}]`);
    t.ok(counts[2] >= before && counts[2] <= sent, `round ${round}: timechart total ${counts[2]} within [${before}, ${sent}]`);
    t.ok(counts[1] <= counts[0], `round ${round}: the status=500 count is part of the whole`);
  }
  // Settled: exactly every acknowledged event, once.
  t.equal(await countOf(node.url, repo.name, node.adminToken), acknowledged);
  t.equal(await countOf(node.url, repo.name, node.adminToken, 'status=500'), Math.ceil(acknowledged / 3));
});
