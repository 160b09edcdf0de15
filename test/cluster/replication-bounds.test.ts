/**
 * Replication's bandwidth and concurrency bounds, both ways, on a real broker and two real nodes
 * (docs/replication.md, "Bounds"). Partition 0 is digested by node 1, partition 1 by node 2, so each
 * node copies the other's segments. Node 2 is bounded: it takes in at most IN bytes/s
 * (replication_bytes_per_second) and sends at most OUT bytes/s, one copy at a time
 * (replication_outbound_*); node 1 is unbounded. So node 2's received bytes follow IN and node 1's
 * follow OUT (node 1 asks for two copies at once; node 2 refuses the second until the first ends).
 *
 * Measured from the outside: the received byte counts of both nodes, sampled over HTTP. Between any
 * two samples, no more bytes may arrive than the rate allows over the longest time the two samples
 * can span, plus a few chunks (a paced sender may release one chunk at once after being idle). A
 * loaded machine can only make copies slower, never faster, so the check cannot fail by load; an
 * unbounded copy on 127.0.0.1 moves these megabytes in well under a second and fails it.
 */
import t from 'tap';
import { clusterConfig, replicationStatus, waitForAlive, type ReplicationStatus } from '../helpers/cluster.js';
import { freePort, startBroker } from '../helpers/kafka-broker.js';
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

t.test('copies keep to the bytes per second and parallel copies of both ends', async (t) => {
  const broker = await startBroker(t);
  const ports = [await freePort(), await freePort()];
  const prefix = `b${Date.now().toString(36)}-`;
  const bounds = [
    'replication_bytes_per_second = 0\nreplication_outbound_bytes_per_second = 0\nreplication_parallel_transfers = 2',
    `replication_bytes_per_second = ${IN}\nreplication_outbound_bytes_per_second = ${OUT}\nreplication_outbound_parallel_transfers = 1`,
  ];
  const nodes: TestNode[] = await Promise.all(
    [0, 1].map(async (i) => {
      const dataDir = await tempDir(t, `logsvc-bounds-n${i + 1}-`);
      const config = clusterConfig(i + 1, broker.brokers, prefix, ports[i]!, ports.filter((_, j) => j !== i), {
        partitions: 2,
        clusterExtra: `segment_replication_factor = 2\n${bounds[i]}`,
        extra: '[self_logs]\nenabled = false\n',
      });
      return startNode(t, { dataDir, config, readyTimeoutMs: 90_000 });
    }),
  );
  const [n1, n2] = nodes as [TestNode, TestNode];
  await waitForAlive(nodes, [1, 2]);
  await waitOwnedBy(n1, [1, 2]);
  const repo = await createRepo(n1.url, n1.adminToken, 'ledger');

  const samples: Sample[][] = [[], []];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      for (const [k, n] of nodes.entries()) {
        const sent = Date.now();
        const r = await replicationStatus(n).catch(() => null);
        if (r !== null) samples[k]!.push({ sent, answered: Date.now(), r });
      }
      await sleep(200);
    }
  })();
  // About 11 MB in 80 requests, each landing in a random partition: megabytes each way.
  const N = 20_000;
  for (let i = 0; i < N; i += 2000) await ingestLedger(nodes[(i / 2000) % 2]!, repo.ingestToken, i, 2000, 500, 250);
  await waitAllReplicated(nodes, 2 * N, 240_000);
  sampling = false;
  await sampler;

  const last = (k: number): ReplicationStatus => samples[k]!.at(-1)!.r;
  const intoTwo = last(1).bytesReceived;
  const intoOne = last(0).bytesReceived;
  t.ok(intoTwo > 2 * SLACK, `node 2 received ${intoTwo} bytes (copies of node 1's segments)`);
  t.ok(intoOne > 2 * SLACK, `node 1 received ${intoOne} bytes (copies of node 2's segments)`);
  t.ok(last(1).bytesSent >= intoOne, 'node 2 sent what node 1 received');

  const inbound = worstExcess(samples[1]!, (r) => r.bytesReceived, IN);
  t.ok(inbound.excess <= SLACK, `into node 2 at most ${IN} bytes/s (+ ${SLACK}): worst ${inbound.at}`);
  const outbound = worstExcess(samples[0]!, (r) => r.bytesReceived, OUT);
  t.ok(outbound.excess <= SLACK, `out of node 2 at most ${OUT} bytes/s (+ ${SLACK}): worst ${outbound.at}`);
  const first = samples[0]!.find((s) => s.r.bytesReceived > 0)!;
  const done = samples[0]!.find((s) => s.r.bytesReceived === intoOne)!;
  t.ok(done.answered - first.sent >= ((intoOne - SLACK) / OUT) * 1000, `node 2's copies took ${done.answered - first.sent} ms, no less than ${OUT} bytes/s allows for ${intoOne} bytes`);

  t.same([...new Set(samples[1]!.map((s) => s.r.sending))].filter((k) => k > 1), [], 'node 2 never sent two copies at once');
  t.ok(last(1).sendRefused > 0, `node 2 refused ${last(1).sendRefused} copy request(s) past its one at a time; node 1 asked again`);
  // count() only: a distinct count of this many values is an estimate.
  for (const n of nodes) {
    const { count, warnings } = await ledger(n);
    t.same({ count, warnings }, { count: N, warnings: [] }, `asked on ${n.url}: every event, no warning`);
  }
});
