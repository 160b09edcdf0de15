/**
 * Retention in a two-node cluster on a real broker, decided once in global state: data past
 * retention is deleted on both nodes (each holds the segments it digested), and a node that was
 * down while a deletion was decided deletes its share when it returns, even though by then the
 * limit itself was lifted (the decision stands; only the global bound says so). Segment files are
 * told apart by their datasource's `batch` tag, read from each node's data dir. A redaction
 * decided while a node is down is likewise carried out by it when it returns.
 */
import t from 'tap';
import { readFile } from 'node:fs/promises';
import { startBroker } from '../helpers/kafka-broker.js';
import { freePort } from '../helpers/free-port.js';
import { startNode, tempDir, type TestNode } from '../helpers/node-process.js';
import { clusterConfig, waitForAlive } from '../helpers/cluster.js';
import { segmentFiles } from '../helpers/segments.js';
import { countOf, createRepo, ingestStructured, mustGql, sleep, until } from '../helpers/query.js';
import { parseSegment } from '../../src/segments/segment-file.js';

t.setTimeout(400_000);

const DAY = 86_400_000;
const ALL_TIME = { start: '3650days' };

/** The `batch` tags of the repository's segment files in `dataDir` ("ancient-3", "new-1", ...). */
async function batchesOn(dataDir: string, repoId: string): Promise<string[]> {
  const out: string[] = [];
  for (const f of await segmentFiles(dataDir)) {
    if (!f.includes(`/segments/${repoId}/`)) continue;
    try {
      out.push(parseSegment(await readFile(f), f).meta.tags.batch ?? '?');
    } catch {
      // unlinked between the listing and the read
    }
  }
  return out.sort();
}

const kinds = (batches: string[]): Set<string> => new Set(batches.map((b) => b.replace(/-\d+$/, '')));

t.test('two nodes delete what is past retention, one of them after it returns', async (t) => {
  const broker = await startBroker(t);
  const ports = [await freePort(), await freePort()];
  const prefix = `r${Date.now().toString(36)}-`;
  const dirs = [await tempDir(t, 'logsvc-ret-n1-'), await tempDir(t, 'logsvc-ret-n2-')];
  // Every flushed block closes its segment; the sweep runs every second.
  const configs = [1, 2].map((id, i) =>
    clusterConfig(id, broker.brokers, prefix, ports[i]!, [ports[1 - i]!], { partitions: 4, extra: '[retention]\ninterval_seconds = 1\n' }).replace('flush_block_seconds = 1', 'flush_block_seconds = 1\nblocks_per_segment = 1'),
  );
  const start = (i: number): Promise<TestNode> => startNode(t, { dataDir: dirs[i]!, config: configs[i]!, readyTimeoutMs: 90_000 });
  let [n1, n2] = await Promise.all([start(0), start(1)]);
  await waitForAlive([n1!, n2!], [1, 2]);

  const repo = await createRepo(n1!.url, n1!.adminToken, 'aging');
  // Each batch is a datasource of its own, sent on its own to a random partition, digested by one
  // node and copied to the other (factor 2 on two nodes). Both nodes hold every kind once the copies
  // are made: waited for below. (Before, the files were read as soon as 36 were on disk, maybe
  // before the copies: a node that digested none of a kind, 2^-12 per kind and node, 0.15 % of
  // runs in all, could then fail "holds segments of every kind".)
  const everyKind = (b: string[]): boolean => kinds(b).size === 3;
  const now = Date.now();
  const kindsAge: [string, number][] = [['ancient', 20 * DAY], ['old', 10 * DAY], ['new', 3_600_000]];
  for (const [kind, age] of kindsAge) {
    for (let b = 0; b < 12; b++) {
      const events = Array.from({ length: 10 }, (_, i) => ({ timestamp: now - age + i, rawstring: `${kind} batch ${b} event ${i}`, attributes: { kind }, tags: { batch: `${kind}-${b}` } }));
      await ingestStructured(n1!.url, repo.ingestToken, events);
    }
  }
  await until('all 360 events searchable', () => countOf(n1!.url, 'aging', n1!.adminToken, '', ALL_TIME), (n) => n === 360);
  const held = await until(
    'every batch in a closed segment on one of the nodes, and every kind on both',
    async () => [await batchesOn(dirs[0]!, repo.id), await batchesOn(dirs[1]!, repo.id)],
    ([a, b]) => a!.length + b!.length >= 36 && everyKind(a!) && everyKind(b!),
  );
  for (const [i, batches] of held.entries()) t.strictSame([...kinds(batches!)].sort(), ['ancient', 'new', 'old'], `node ${i + 1} holds segments of every kind`);

  // 1. Both up: a 15-day limit, decided once, deletes the ancient batches on both nodes.
  await mustGql(n2!.url, n2!.adminToken, 'mutation { updateRetention(repositoryName: "aging", timeBasedRetention: 15) { repository { name } } }');
  for (const [i, dir] of dirs.entries()) {
    const left = await until(`node ${i + 1} without ancient segments`, () => batchesOn(dir, repo.id), (b) => !kinds(b).has('ancient'));
    t.ok(kinds(left).has('old') && kinds(left).has('new'), `node ${i + 1} keeps the newer segments`);
  }
  t.equal(await countOf(n1!.url, 'aging', n1!.adminToken, 'kind=ancient', ALL_TIME), 0, 'the ancient events are gone from the results');

  // 2. Node 2 down: a 5-day limit is decided on node 1 and then lifted before node 2 returns.
  const n2Old = (await batchesOn(dirs[1]!, repo.id)).filter((b) => b.startsWith('old-'));
  t.ok(n2Old.length > 0, 'node 2 holds old segments before it stops');
  t.equal(await n2!.stop(), 0);
  await mustGql(n1!.url, n1!.adminToken, 'mutation { updateRetention(repositoryName: "aging", timeBasedRetention: 5) { repository { name } } }');
  await until('node 1 without old segments', () => batchesOn(dirs[0]!, repo.id), (b) => !kinds(b).has('old'));
  await mustGql(n1!.url, n1!.adminToken, 'mutation { updateRetention(repositoryName: "aging", timeBasedRetention: null) { repository { name } } }');
  await sleep(2000);
  t.strictSame((await batchesOn(dirs[1]!, repo.id)).filter((b) => b.startsWith('old-')), n2Old, 'node 2, down, still has its old segments on disk');

  n2 = await start(1);
  await waitForAlive([n1!, n2], [1, 2]);
  const after = await until('node 2 deletes the old segments decided while it was down', () => batchesOn(dirs[1]!, repo.id), (b) => !kinds(b).has('old'));
  t.ok(kinds(after).has('new'), 'node 2 keeps its new segments');
  for (const n of [n1!, n2]) {
    t.equal(await countOf(n.url, 'aging', n.adminToken, 'kind=old', ALL_TIME), 0, `no old events in the results on ${n.url}`);
    t.equal(await countOf(n.url, 'aging', n.adminToken, 'kind=new', ALL_TIME), 120, `all new events in the results on ${n.url}`);
  }

  // 3. A redaction, decided while node 2 is down: node 1 rewrites its share at once, node 2 when it returns.
  t.equal(await n2.stop(), 0);
  const redact = 'mutation($s: DateTime!, $e: DateTime!) { redactEvents(input: {repositoryName: "aging", start: $s, end: $e, query: "kind=new @rawstring=/event [0-4]$/"}) }';
  const id = (await mustGql(n1!.url, n1!.adminToken, redact, { s: new Date(now - 2 * 3_600_000).toISOString(), e: new Date(Date.now() + 60_000).toISOString() })).redactEvents as string;
  const list = 'query { redactEvents(repositoryName: "aging", includeFinished: true) { id status finishedOnNodes eventsRedacted } }';
  const half = await until('node 1 done with its share', async () => (await mustGql(n1!.url, n1!.adminToken, list)).redactEvents[0], (x: { finishedOnNodes: number[] }) => x.finishedOnNodes.includes(1));
  t.match(half, { id, status: 'running', finishedOnNodes: [1] }, 'still running: node 2 holds segments it has not gone through');
  n2 = await start(1);
  await waitForAlive([n1!, n2], [1, 2]);
  const done = await until('node 2 done after it returned', async () => (await mustGql(n2!.url, n2!.adminToken, list)).redactEvents[0], (x: { status: string }) => x.status === 'done');
  t.match(done, { id, finishedOnNodes: [1, 2], eventsRedacted: 60 });
  for (const n of [n1!, n2]) {
    t.equal(await countOf(n.url, 'aging', n.adminToken, 'kind=new', ALL_TIME), 60, `half of the new events are left on ${n.url}`);
    t.equal(await countOf(n.url, 'aging', n.adminToken, 'kind=new @rawstring=/event [0-4]$/', ALL_TIME), 0, `none of the redacted ones on ${n.url}`);
  }
  t.equal(await n2.stop(), 0);
  t.equal(await n1!.stop(), 0);
});
