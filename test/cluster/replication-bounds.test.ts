/**
 * Replication's bandwidth and concurrency bounds, both ways, on a real broker and two real nodes
 * (docs/replication.md, "Bounds"). Partition 0 is digested by node 1, partition 1 by node 2, so each
 * node copies the other's segments. Node 2 is bounded: it takes in at most IN bytes/s
 * (replication_bytes_per_second) and sends at most OUT bytes/s, one copy at a time
 * (replication_outbound_*); node 1 is unbounded. So node 2's received bytes follow IN and node 1's
 * follow OUT. Then node 1 is stopped while node 2 writes several segments: back, node 1 lacks them
 * all at once and asks for two (its replication_parallel_transfers); node 2 refuses the second until
 * the first ends.
 *
 * Measured from the outside: the received byte counts of both nodes, sampled over HTTP. Between any
 * two samples, no more bytes may arrive than the rate allows over the longest time the two samples
 * can span, plus a few chunks (a paced sender may release one chunk at once after being idle). A
 * loaded machine can only make copies slower, never faster, so the check cannot fail by load; an
 * unbounded copy on 127.0.0.1 moves these megabytes in well under a second and fails it.
 */
import t from 'tap';
import { clusterConfig, replicationStatus, waitForAlive, type ReplicationStatus, waitFor } from '../helpers/cluster.js';
import { startBroker } from '../helpers/kafka-broker.js';
import { freePort } from '../helpers/free-port.js';
import { startNode, tempDir, type TestNode } from '../helpers/node-process.js';
import { ingestLedger, ledger, waitAllReplicated, waitOwnedBy } from '../helpers/replication.js';
import { createRepo, sleep } from '../helpers/query.js';

t.setTimeout(600_000);

const IN = 384 * 1024;
const OUT = 256 * 1024;
/** A few chunks: the most a paced copy may run ahead of the rate (256 KiB chunks from node 1, 64 KiB from node 2). */
const SLACK = 1024 * 1024;

interface Sample {
  /** When the request was sent and the answer came (ms, this process). */
  sent: number;
  answered: number;
  r: ReplicationStatus;
}

/** The largest excess of received bytes over `rate` between two samples, taking the longest span they can cover. */
function worstExcess(samples: Sample[], bytes: (r: ReplicationStatus) => number, rate: number): { excess: number; at: string } {
  let worst = { excess: -Infinity, at: '' };
  for (let i = 0; i < samples.length; i++) {
    for (let j = i + 1; j < samples.length; j++) {
      const moved = bytes(samples[j]!.r) - bytes(samples[i]!.r);
      const allowed = (rate * (samples[j]!.answered - samples[i]!.sent)) / 1000;
      if (moved - allowed > worst.excess) worst = { excess: moved - allowed, at: `${moved} bytes in at most ${samples[j]!.answered - samples[i]!.sent} ms` };
    }
  }
  return worst;
}

/** Samples the replication status of `nodes` every ~200 ms until the returned stop is awaited. */
function sample(nodes: TestNode[]): { samples: Sample[][]; stop: () => Promise<void> } {
  const samples: Sample[][] = nodes.map(() => []);
  let sampling = true;
  const loop = (async () => {
    while (sampling) {
      for (const [k, n] of nodes.entries()) {
        const sent = Date.now();
        const r = await replicationStatus(n).catch(() => null);
        if (r !== null) samples[k]!.push({ sent, answered: Date.now(), r });
      }
      await sleep(200);
    }
  })();
  return {
    samples,
    stop: async () => {
      sampling = false;
      await loop;
    },
  };
}

t.test('copies keep to the bytes per second and parallel copies of both ends', async (t) => {
  const broker = await startBroker(t);
  const ports = [await freePort(), await freePort()];
  const prefix = `b${Date.now().toString(36)}-`;
  const bounds = [
    'replication_bytes_per_second = 0\nreplication_outbound_bytes_per_second = 0\nreplication_parallel_transfers = 2',
    `replication_bytes_per_second = ${IN}\nreplication_outbound_bytes_per_second = ${OUT}\nreplication_outbound_parallel_transfers = 1`,
  ];
  const setups = await Promise.all(
    [0, 1].map(async (i) => ({
      dataDir: await tempDir(t, `logsvc-bounds-n${i + 1}-`),
      config: clusterConfig(i + 1, broker.brokers, prefix, ports[i]!, ports.filter((_, j) => j !== i), {
        partitions: 2,
        clusterExtra: `segment_replication_factor = 2\n${bounds[i]}`,
        extra: '[self_logs]\nenabled = false\n',
      }),
    })),
  );
  const start = (i: number): Promise<TestNode> => startNode(t, { ...setups[i]!, readyTimeoutMs: 90_000 });
  const started = await Promise.all([start(0), start(1)]);
  let n1 = started[0]!;
  const n2 = started[1]!;
  await waitForAlive([n1, n2], [1, 2]);
  await waitOwnedBy(n1, [1, 2]);
  const repo = await createRepo(n1.url, n1.adminToken, 'ledger');

  // 1. Both up, both digesting: each copies the other's segments as they are written.
  const one = sample([n1, n2]);
  // About 11 MB in 80 requests, each landing in a random partition: megabytes each way.
  const N = 20_000;
  for (let i = 0; i < N; i += 2000) await ingestLedger([n1, n2][(i / 2000) % 2]!, repo.ingestToken, i, 2000, 500, 250);
  await waitAllReplicated([n1, n2], 2 * N, 240_000);
  await one.stop();

  const last = (s: Sample[]): ReplicationStatus => s.at(-1)!.r;
  const [into1, into2] = one.samples as [Sample[], Sample[]];
  const intoTwo = last(into2).bytesReceived;
  const intoOne = last(into1).bytesReceived;
  t.ok(intoTwo > 2 * SLACK, `node 2 received ${intoTwo} bytes (copies of node 1's segments)`);
  t.ok(intoOne > 2 * SLACK, `node 1 received ${intoOne} bytes (copies of node 2's segments)`);
  t.ok(last(into2).bytesSent >= intoOne, 'node 2 sent what node 1 received');
  const inbound = worstExcess(into2, (r) => r.bytesReceived, IN);
  t.ok(inbound.excess <= SLACK, `into node 2 at most ${IN} bytes/s (+ ${SLACK}): worst ${inbound.at}`);
  const outbound = worstExcess(into1, (r) => r.bytesReceived, OUT);
  t.ok(outbound.excess <= SLACK, `out of node 2 at most ${OUT} bytes/s (+ ${SLACK}): worst ${outbound.at}`);
  const first = into1.find((s) => s.r.bytesReceived > 0)!;
  const done = into1.find((s) => s.r.bytesReceived === intoOne)!;
  t.ok(done.answered - first.sent >= ((intoOne - SLACK) / OUT) * 1000, `node 2's copies took ${done.answered - first.sent} ms, no less than ${OUT} bytes/s allows for ${intoOne} bytes`);

  // 2. Node 1 away while node 2 writes several segments; back, it lacks them all at once and asks
  //    for two (its replication_parallel_transfers): node 2 sends one and refuses the other until
  //    the first is done.
  await n1.stop();
  await waitForAlive([n2], [2]);
  await waitOwnedBy(n2, [2]);
  const M = 4000;
  for (let i = N; i < N + M; i += 500) {
    await ingestLedger(n2, repo.ingestToken, i, 500, 500, 250);
    await sleep(1200); // segments close at the flush interval: several of them
  }
  // Alone, node 2 counts its segments held enough (every live node holds them) once listed.
  await waitFor('node 2 holding every event, its own segments listed', async () => {
    const r = await replicationStatus(n2);
    return r.pendingOwn === 0 && r.nodes.find((x) => x.node === 2)?.events === N + M ? r : null;
  }, 120_000);
  n1 = await start(0);
  const two = sample([n1, n2]);
  await waitForAlive([n1, n2], [1, 2]);
  await waitAllReplicated([n1, n2], 2 * (N + M), 240_000);
  await two.stop();
  const [back1, from2] = two.samples as [Sample[], Sample[]];
  t.same([...new Set([...one.samples[1]!, ...from2].map((s) => s.r.sending))].filter((k) => k > 1), [], 'node 2 never sent two copies at once');
  t.ok(last(from2).sendRefused > 0, `node 2 refused ${last(from2).sendRefused} copy request(s) past its one at a time; node 1 asked again`);
  const resumed = worstExcess(back1, (r) => r.bytesReceived, OUT);
  t.ok(resumed.excess <= SLACK, `node 1 catching up: at most ${OUT} bytes/s out of node 2 (+ ${SLACK}): worst ${resumed.at}`);
  // count() only: a distinct count of this many values is an estimate.
  for (const n of [n1, n2]) {
    const { count, warnings } = await ledger(n);
    t.same({ count, warnings }, { count: N + M, warnings: [] }, `asked on ${n.url}: every event, no warning`);
  }
});
