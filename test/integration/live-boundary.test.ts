/**
 * Live streams at their start boundary on one node (the embedded queue): the historical part is
 * the digest's snapshot (segments and memory) and the live part every record the digest takes
 * after it, subscribed in the same step. Under a steady load, each stream must hold every event
 * once: none twice, none missing, also those of a sender whose clock runs two seconds ahead (an
 * event stamped after the query's start but digested before it is in the historical part).
 */
import t, { type Test } from 'tap';
import { startNode } from '../helpers/node-process.js';
import { createRepo, openNdjsonStream, sleep } from '../helpers/query.js';
import { checkLiveStream, startLiveLoad, type StreamCheck } from '../helpers/live-load.js';

t.setTimeout(300_000);

function report(t: Test, what: string, r: StreamCheck): void {
  t.comment(`${what}: ${r.events} events, ${r.ids} ids, ${r.twice.length} twice${r.twice.length > 0 ? ` (${r.twice.slice(0, 5).join(' ')})` : ''}, ${r.missing.length} missing${r.missing.length > 0 ? ` (${r.missing.slice(0, 5).join(' ')})` : ''}`);
}

t.test('each event once in live streams opened under load on one node', async (t) => {
  const node = await startNode(t, { config: '[digest]\npartitions = 2\nflush_block_seconds = 1\n[self_logs]\nenabled = false\n' });
  const repo = await createRepo(node.url, node.adminToken, 'live');
  const load = startLiveLoad(() => [node], repo.ingestToken, { aheadMs: 2000 });
  t.teardown(() => load.stop());
  await sleep(3000);
  const twice: string[] = [];
  const missing: string[] = [];
  // A stream kept open alongside, and streams one after another.
  const keeper = await openNdjsonStream(node.url, 'live', node.adminToken, { queryString: 'uid=*', isLive: true, start: '1m' }, 200_000);
  for (let i = 0; i < 6; i++) {
    const r = await checkLiveStream(node.url, 'live', node.adminToken, load);
    report(t, `stream ${i}`, r);
    twice.push(...r.twice);
    missing.push(...r.missing);
  }
  await keeper.close();
  await load.stop();
  t.same(twice, [], 'no event twice in any stream');
  t.same(missing, [], 'no acknowledged event missing from any stream');
});
