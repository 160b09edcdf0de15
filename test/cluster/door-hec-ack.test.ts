/**
 * HEC indexer acknowledgement behind a load balancer, on a real two-node cluster: a shipper sends
 * its events to one node and asks another for their ack ids. Every id either node handed out is
 * acknowledged by both (src/ingest/doors/hec-ack.ts: the id carries its own check, computed from
 * global state); an id never handed out, or asked about on another channel, is not. (Before, ack
 * ids lived in one node's memory and the other node answered false, so clients sent the events
 * again: duplicates.) The events are read back through the other node.
 */
import t from 'tap';
import { startCluster, waitForAlive } from '../helpers/cluster.js';
import { api } from '../helpers/http.js';
import { createRepo, sleep, waitForCount } from '../helpers/query.js';

// A broker and two nodes start here.
t.setTimeout(300_000);

t.test('an ack id handed out by one node is acknowledged by the other', async (t) => {
  const c = await startCluster(t, { nodes: 2, partitions: 2 });
  const [n1, n2] = [c.node(1), c.node(2)];
  await waitForAlive([n1, n2], [1, 2]);
  const repo = await createRepo(n1.url, n1.adminToken, 'hecack');
  const hec = (base: string, path: string, body: string, channel: string) =>
    api(base, path, { method: 'POST', body, headers: { authorization: `Splunk ${repo.ingestToken}`, 'x-splunk-request-channel': channel, 'content-type': 'application/json' } });
  // The ingest token reaches node 2 through global state.
  const deadline = Date.now() + 30_000;
  while ((await api(n2.url, '/services/collector/health', { headers: { authorization: `Splunk ${repo.ingestToken}` } })).status !== 200) {
    if (Date.now() > deadline) throw new Error('node 2 did not take the ingest token within 30 s');
    await sleep(200);
  }

  const channel = '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';
  const issued: { by: number; id: number }[] = [];
  for (let i = 0; i < 10; i++) {
    const [by, node] = i % 2 === 0 ? [1, n1] : [2, n2];
    const r = await hec(node.url, '/services/collector/event', JSON.stringify({ event: `ackrun=1 seq=${i}` }), channel);
    t.equal(r.status, 200, r.text);
    issued.push({ by, id: JSON.parse(r.text).ackId as number });
  }
  t.equal(new Set(issued.map((x) => x.id)).size, 10, `ten distinct ids on one channel from two nodes: ${issued.map((x) => x.id).join(' ')}`);

  for (const [name, node] of [['node 1', n1], ['node 2', n2]] as const) {
    const r = await hec(node.url, '/services/collector/ack', JSON.stringify({ acks: issued.map((x) => x.id) }), channel);
    t.equal(r.status, 200, r.text);
    const acks = JSON.parse(r.text).acks as Record<string, boolean>;
    t.same(
      issued.filter((x) => acks[String(x.id)] !== true).map((x) => `${x.id} (from node ${x.by})`),
      [],
      `${name} acknowledges every id, the other node's included`,
    );
  }
  const first = issued[0]!.id;
  const near = first % 2 ** 20 === 2 ** 20 - 1 ? first - 1 : first + 1;
  const other = await hec(n2.url, '/services/collector/ack', JSON.stringify({ acks: [first, near] }), channel);
  t.same(JSON.parse(other.text), { acks: { [first]: true, [near]: false } }, 'an id never handed out is not acknowledged');
  const wrongChannel = await hec(n2.url, '/services/collector/ack', JSON.stringify({ acks: [first] }), 'another-channel');
  t.same(JSON.parse(wrongChannel.text), { acks: { [first]: false } }, 'nor an id asked about on another channel');

  // Acknowledged means stored once: each event is there, read through the node that did not take it.
  t.equal(await waitForCount(n2.url, 'hecack', n2.adminToken, 10, 60_000, 'ackrun=1'), 10, 'ten events, no duplicates');
  t.equal((await api(n1.url, '/api/v1/status')).status, 200);
  t.equal((await api(n2.url, '/api/v1/status')).status, 200);
});
