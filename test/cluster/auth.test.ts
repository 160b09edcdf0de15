/**
 * The cluster port on a real cluster: a peer that does not prove the cluster's secret can neither
 * join (no node sees it alive) nor read a segment (`segment.read`), is refused with a log line and
 * counted in /metrics; the same client with the right secret does both (so the test can fail).
 */
import t from 'tap';
import { connect } from 'node:net';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { startCluster, waitForAlive, aliveAsSeenBy } from '../helpers/cluster.js';
import { api } from '../helpers/http.js';
import { createRepo, sleep, ingestStructured } from '../helpers/query.js';
import { Membership } from '../../src/cluster/index.js';
import { FrameParser, type Message } from '../../src/cluster/protocol/frames.js';
import { systemClock } from '../../src/lib/clock.js';
import { recordingLogger, waitFor, type LogLine } from '../helpers/membership.js';

t.setTimeout(400_000);

const SECRET = 'auth-test-cluster-secret-0123';

/** The first frame a node sends on its cluster port: its hello (it names the cluster id). */
async function helloOf(port: number): Promise<Message> {
  const sock = connect({ host: '127.0.0.1', port });
  const parser = new FrameParser();
  try {
    return await new Promise<Message>((resolve, reject) => {
      sock.on('data', (c: Buffer) => {
        const got = parser.push(c);
        if (got.length > 0) resolve(got[0]!);
      });
      sock.on('error', reject);
      setTimeout(() => reject(new Error('no hello')), 10_000);
    });
  } finally {
    sock.destroy();
  }
}

async function segmentFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      if (e.isDirectory() && !e.name.startsWith('.')) await walk(join(d, e.name));
      else if (e.name.endsWith('.seg')) out.push(e.name.slice(0, -4));
    }
  };
  await walk(join(dir, 'segments'));
  return out;
}

t.test('a peer with the wrong secret cannot join or read segments', async (t) => {
  const c = await startCluster(t, { nodes: 2, partitions: 2, secret: SECRET });
  const [n1, n2] = [c.node(1), c.node(2)];
  await waitForAlive([n1, n2], [1, 2]);
  const repo = await createRepo(n1.url, n1.adminToken, 'authrepo');
  await ingestStructured(n1.url, repo.ingestToken, Array.from({ length: 50 }, (_, i) => ({ timestamp: Date.now(), attributes: { i }, rawstring: `e${i}`, tags: { host: "a" } })));
  // A segment file on disk may still be open (segment.read serves only closed, listed ones): the
  // ids on both nodes' disks are copies, and only closed, listed segments are copied.
  let ids: string[] = [];
  const until = Date.now() + 60_000;
  while (ids.length === 0 && Date.now() < until) {
    const on2 = new Set(await segmentFiles(c.nodes[1]!.dataDir));
    ids = (await segmentFiles(c.nodes[0]!.dataDir)).filter((id) => on2.has(id));
    if (ids.length === 0) await sleep(500);
  }
  t.ok(ids.length > 0, 'node 1 holds a closed segment that node 2 copied');
  const clusterId = String((await helloOf(c.nodes[0]!.clusterPort)).clusterId);

  const client = async (id: number, secret: string): Promise<{ m: Membership; logs: LogLine[] }> => {
    const logs: LogLine[] = [];
    const m = new Membership({
      selfId: id, selfUuid: randomUUID(), clusterId, uri: `http://127.0.0.1:1`, listen: { host: '127.0.0.1', port: 0 },
      peers: [`127.0.0.1:${c.nodes[0]!.clusterPort}`], heartbeatIntervalMs: 200, failureTimeoutMs: 2000, logger: recordingLogger(logs), clock: systemClock,
      secret: Buffer.from(secret),
    });
    await m.start();
    t.teardown(() => m.stop());
    return { m, logs };
  };
  const read = async (m: Membership, id: string): Promise<number> => {
    let bytes = 0;
    for await (const chunk of m.stream(1, 'segment.read', { id, from: 0 }, { timeoutMs: 10_000 })) bytes += (chunk as { data: Uint8Array }).data.byteLength;
    return bytes;
  };

  const bad = await client(98, 'a-wrong-cluster-secret-9876');
  await waitFor('the impostor is refused', () => bad.logs.some((l) => l.fields.reason === 'auth'), 30_000);
  await sleep(1000);
  t.notOk(bad.m.isAlive(1), 'node 1 never answered the impostor as a peer');
  await t.rejects(read(bad.m, ids[0]!), { code: 'E_UNAVAILABLE' }, 'segment.read refused: no connection to ask through');
  t.notOk((await aliveAsSeenBy(n1.url, n1.adminToken)).includes(98), 'node 1 does not list it');
  await waitFor('node 1 logs the refusal', () => /cluster peer refused.*reason=auth|"reason":"auth"/.test(n1.stderr()), 30_000);
  t.match(n1.stderr(), /authentication failed/, 'the log line says why');
  const metrics = await api(n1.url, '/metrics', {});
  const failures = Number(/^logsvc_cluster_auth_failures_total (\d+)/m.exec(metrics.text)?.[1] ?? '0');
  t.ok(failures >= 1, `counted in /metrics (${failures})`);
  await bad.m.stop();

  // The same client with the right secret joins and reads the segment: the refusal was the secret.
  const good = await client(97, SECRET);
  await waitFor('the right secret joins', () => good.m.isAlive(1), 30_000);
  t.ok((await read(good.m, ids[0]!)) > 0, 'segment.read answers with the right secret');
  await good.m.stop();
});
