/**
 * Live streams at their start boundary, on a real three-node cluster under load (docs/cluster.md,
 * "Live queries"): a live query is answered by a historical part (segments and digest memory on
 * every node) and a live part (records read straight from Kafka by the node's tail). Each stream
 * must hold every event once: none twice (in both parts) and none missing (in neither), whichever
 * node it is opened on (two partitions on three nodes: node 3 digests none), whether the node's
 * Kafka tail was already running (a stream kept open on node 1) or starts for it, and while
 * partitions move: node 1 stops (its partitions handed over) and comes back (handed back). A
 * stream opened while node 1 stops, is away or restarts may miss what only node 1 held, with the
 * missing-data warning; no stream may have an event twice.
 */
import t, { type Test } from 'tap';
import { startCluster, waitForAlive } from '../helpers/cluster.js';
import { createRepo, sleep } from '../helpers/query.js';
import { checkLiveStream, startLiveLoad, type StreamCheck } from '../helpers/live-load.js';
import { openNdjsonStream } from '../helpers/query.js';
import { digestPartitions } from '../helpers/replication.js';
import type { TestNode } from '../helpers/node-process.js';

t.setTimeout(420_000);

function report(t: Test, what: string, r: StreamCheck): void {
  t.comment(`${what}: ${r.events} events, ${r.ids} ids, ${r.twice.length} twice${r.twice.length > 0 ? ` (${r.twice.slice(0, 5).join(' ')})` : ''}, ${r.missing.length} missing${r.missing.length > 0 ? ` (${r.missing.slice(0, 5).join(' ')})` : ''}${r.partial ? ', answer says partial results' : ''}`);
}

t.test('each event once in live streams opened under load, on every node, through handovers', async (t) => {
  const c = await startCluster(t, { nodes: 3, partitions: 2, extra: '[self_logs]\nenabled = false\n' });
  const [n1, n2, n3] = [c.node(1), c.node(2), c.node(3)];
  await waitForAlive([n1, n2, n3], [1, 2, 3]);
  const repo = await createRepo(n1.url, n1.adminToken, 'live');
  let up = [c.node(1), c.node(2), c.node(3)];
  const load = startLiveLoad(() => up, repo.ingestToken);
  t.teardown(() => load.stop());
  await sleep(3000);

  const twice: string[] = [];
  const missing: string[] = [];
  const partial: string[] = [];
  // While node 1 stops it refuses query parts, and while it is away or restarts what only it holds
  // cannot be read (docs/replication.md, "Queries"): a stream opened then may miss events and says
  // so (the missing-data warning). Only then may a stream miss events; none may have one twice.
  const check = async (id: number, what: string, mayBePartial = false): Promise<void> => {
    const n = c.node(id);
    const r = await checkLiveStream(n.url, 'live', n.adminToken, load);
    report(t, `${what} on node ${id}`, r);
    twice.push(...r.twice);
    if (r.partial) partial.push(`${what} on node ${id}`);
    if (!(r.partial && mayBePartial)) missing.push(...r.missing);
  };

  // Node 1's tail keeps running through its streams (the tail is shared); nodes 2 and 3 start theirs per stream.
  const keeper = await openNdjsonStream(n1.url, 'live', n1.adminToken, { queryString: 'uid=*', isLive: true, start: '1m' }, 300_000);
  for (let i = 0; i < 6; i++) await check((i % 3) + 1, `stream ${i}`);
  await keeper.close();

  // Node 1 stops cleanly (its partition handed over to the next host), then returns (handed back):
  // streams on nodes 2 and 3 opened one after another all the while.
  let moving = true;
  const during = (async () => {
    for (let i = 0; moving; i++) await check((i % 2) + 2, `during handovers, stream ${i}`, true);
  })();
  await sleep(1000);
  up = [c.node(2), c.node(3)];
  // Its stop hands its partition over; the exit code is not asserted (under this load a stop step
  // can overrun its own bound, which the node reports and exits 1 for), only that it stopped itself.
  const stopped = await n1.stopOutcome();
  t.notOk(stopped.killedByTest, `node 1 stops by itself (${stopped.describe})`);
  await sleep(3000);
  const back = await c.restart(1);
  await waitForAlive([back, c.node(2), c.node(3)], [1, 2, 3]);
  up = [back, c.node(2), c.node(3)];
  // Handed back: each partition digested again by its first host (under a loaded machine this can
  // take longer than the sleep below; a stream opened before it ends may rightly say partial).
  await waitHandedBack(back);
  await sleep(6000);
  moving = false;
  await during;
  for (let i = 0; i < 3; i++) await check(i + 1, `after handovers, stream ${i}`);

  await load.stop();
  t.same(twice, [], 'no event twice in any stream');
  t.same(missing, [], 'no acknowledged event missing from any stream whose answer is not partial');
  t.ok(partial.every((what) => what.startsWith('during handovers')), `partial answers only while node 1 stops and returns (${partial.length}: ${partial.join(', ')})`);
});

/** Waits until every digest partition is owned by its first host and digested by it (at most 90 s). */
async function waitHandedBack(n: TestNode): Promise<void> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const parts = await digestPartitions(n).catch(() => null);
    if (parts !== null && parts.every((p) => p.owner === p.hosts[0] && p.digesting)) return;
    if (Date.now() > deadline) throw new Error(`partitions not handed back to their first hosts: ${JSON.stringify(parts)}`);
    await sleep(200);
  }
}
