/**
 * Membership over real TCP on 127.0.0.1: three nodes find each other from a partial peers list,
 * duplicate connections resolve to one, a leaving node is down at once and is up again when it
 * returns, payloads travel, refusals (other cluster, other version, node id taken) are logged and
 * said in a final frame, and a partition through the TCP proxy is detected and healed.
 */
import t, { type Test } from 'tap';
import { connect } from 'node:net';
import { encodeFrame, FrameParser, PROTOCOL_VERSION, type Message } from '../../../src/cluster/protocol/frames.js';
import { parseAddr } from '../../../src/cluster/index.js';
import { aliveSet, FAILURE_MS, HEARTBEAT_MS, startMember, waitFor } from '../../helpers/membership.js';
import { TcpProxy } from '../../helpers/tcp-proxy.js';

t.test('three nodes from a partial peers list see each other alive; one connection per pair', async (t) => {
  const a = await startMember(t, 1, []);
  const b = await startMember(t, 2, [a.addr]);
  const c = await startMember(t, 3, [b.addr]); // knows only b; learns a through gossip
  for (const n of [a, b, c]) await waitFor(`node ${n.id} to see all three alive`, () => aliveSet(n.m).join() === '1,2,3');
  for (const n of [a, b, c]) {
    const conns = n.m.connections();
    t.strictSame(conns.map((x) => x.nodeId), [1, 2, 3].filter((id) => id !== n.id), `node ${n.id}: one connection per peer`);
    for (const x of conns) {
      const other = [a, b, c].find((o) => o.id === x.nodeId)!;
      const back = other.m.connections().find((y) => y.nodeId === n.id);
      t.not(back?.direction, x.direction, `nodes ${n.id} and ${x.nodeId} agree on who dialed`);
    }
    const view = n.m.view();
    t.strictSame(view.map((v) => [v.id, v.alive]), [[1, true], [2, true], [3, true]]);
    t.strictSame(view.map((v) => v.uri), ['http://127.0.0.1:8001', 'http://127.0.0.1:8002', 'http://127.0.0.1:8003']);
    t.ok(view.every((v) => typeof v.lastHeartbeat === 'number' && Date.now() - v.lastHeartbeat < 10_000));
    t.ok(c.logs.some((l) => l.msg === 'cluster node learned from gossip' && l.fields.node === 1), 'c learned a by gossip');
  }
  t.equal(a.m.isAlive(99), false);
  t.equal(a.m.lastHeartbeat(99), null);
});

t.test('both sides dialing each other end with one connection', async (t) => {
  // Each knows the other's address from the start: they dial at once, duplicates resolve.
  const a = await startMember(t, 1, []);
  const b = await startMember(t, 2, [a.addr]);
  const a2 = await startMember(t, 3, [a.addr, b.addr]);
  await waitFor('all alive', () => [a, b, a2].every((n) => aliveSet(n.m).join() === '1,2,3'));
  await new Promise((r) => setTimeout(r, 5 * HEARTBEAT_MS));
  for (const n of [a, b, a2]) t.equal(n.m.connections().length, 2, `node ${n.id} has exactly two connections`);
});

t.test('a leaving node is down at once; it comes back with the peers list', async (t) => {
  const a = await startMember(t, 1, []);
  const b = await startMember(t, 2, [a.addr]);
  const c = await startMember(t, 3, [a.addr]);
  await waitFor('all alive', () => [a, b, c].every((n) => aliveSet(n.m).join() === '1,2,3'));
  const downs: string[] = [];
  a.m.on('down', (n, reason) => downs.push(`${n.id}:${reason}`));
  const ups: number[] = [];
  a.m.on('up', (n) => ups.push(n.id));
  await c.m.stop();
  await waitFor('a and b see c down', () => !a.m.isAlive(3) && !b.m.isAlive(3), FAILURE_MS / 2);
  t.strictSame(downs, ['3:leaving']);
  const c2 = await startMember(t, 3, [b.addr], { selfUuid: c.uuid });
  await waitFor('c back on every node', () => [a, b, c2].every((n) => aliveSet(n.m).join() === '1,2,3'));
  t.strictSame(ups, [3]);
  t.equal(a.m.view().find((v) => v.id === 3)?.addr, c2.addr, 'the new address replaced the old');
});

t.test('payloads travel with heartbeats; a change is an event', async (t) => {
  let owned = [0, 1];
  const a = await startMember(t, 1, [], { payload: () => ({ owned }) });
  const b = await startMember(t, 2, [a.addr]);
  const seen: unknown[] = [];
  b.m.on('payload', () => {
    throw new Error('a listener bug');
  });
  b.m.on('payload', (id, p) => id === 1 && seen.push(p));
  await waitFor('b has a payload', () => seen.length === 1);
  t.strictSame(b.m.payloadOf(1), { owned: [0, 1] });
  t.strictSame(a.m.payloadOf(1), { owned: [0, 1] }, 'own payload');
  await new Promise((r) => setTimeout(r, 3 * HEARTBEAT_MS));
  t.equal(seen.length, 1, 'an unchanged payload is not an event');
  owned = [2];
  await waitFor('b sees the change', () => seen.length === 2);
  t.strictSame(seen[1], { owned: [2] });
  t.ok(b.logs.some((l) => l.msg === 'cluster membership listener failed'), 'a throwing listener is logged');
  t.ok(b.m.isAlive(1), 'and breaks nothing');
});

t.test('a throwing payload callback does not stop heartbeats', async (t) => {
  const a = await startMember(t, 1, [], {
    payload: () => {
      throw new Error('broken');
    },
  });
  const b = await startMember(t, 2, [a.addr]);
  await waitFor('alive', () => aliveSet(b.m).join() === '1,2');
  await new Promise((r) => setTimeout(r, FAILURE_MS + 3 * HEARTBEAT_MS));
  t.ok(b.m.isAlive(1), 'still alive past the failure timeout');
  t.equal(a.logs.filter((l) => l.level === 'error').length, 1, 'reported once');
});

t.test('a node of another cluster id is refused, with the reason logged on both sides', async (t) => {
  const a = await startMember(t, 1, []);
  const x = await startMember(t, 2, [a.addr], { clusterId: 'other-cluster' });
  await waitFor('refusal logged by both', () =>
    a.logs.some((l) => l.msg === 'cluster peer refused' && l.fields.reason === 'cluster-id') &&
    x.logs.some((l) => l.level === 'warn' && l.fields.reason === 'cluster-id'),
  );
  t.match(a.logs.find((l) => l.msg === 'cluster peer refused')?.fields.detail, /cluster id "other-cluster" is not ours \("test-cluster"\)/);
  await new Promise((r) => setTimeout(r, 5 * HEARTBEAT_MS));
  t.equal(a.logs.filter((l) => l.level === 'warn').length, 1, 'redials do not repeat the warning');
  await new Promise((r) => setTimeout(r, 3 * HEARTBEAT_MS));
  t.strictSame(aliveSet(a.m), [1]);
  t.strictSame(aliveSet(x.m), [2]);
  t.equal(a.m.view().length, 1, 'not a member');
});

/** A raw client: sends `hello`, returns the first message the node answers after its own hello. */
async function rawHello(addr: string, hello: Record<string, unknown>): Promise<{ first: Message; reply: Message | null }> {
  const { host, port } = parseAddr(addr)!;
  const sock = connect({ host, port });
  const parser = new FrameParser();
  const got: Message[] = [];
  sock.on('data', (c: Buffer) => got.push(...parser.push(c)));
  sock.write(encodeFrame({ t: 'hello', ...hello }));
  await new Promise<void>((resolve) => sock.on('close', () => resolve()));
  return { first: got[0]!, reply: got[1] ?? null };
}

const goodHello = { version: PROTOCOL_VERSION, clusterId: 'test-cluster', nodeId: 7, uuid: 'u7', uri: 'http://x', addr: '127.0.0.1:1', incarnation: 1 };

t.test('another protocol version is refused in a final close frame', async (t) => {
  const a = await startMember(t, 1, []);
  const { first, reply } = await rawHello(a.addr, { ...goodHello, version: PROTOCOL_VERSION + 1, somethingNew: true });
  t.equal(first.t, 'hello');
  t.equal(first.version, PROTOCOL_VERSION);
  t.match(reply, { t: 'close', reason: 'protocol-version', message: `protocol version ${PROTOCOL_VERSION + 1} is not ours (${PROTOCOL_VERSION})` });
  t.ok(a.logs.some((l) => l.msg === 'cluster peer refused' && l.fields.reason === 'protocol-version'));
});

t.test('a node id connected under another uuid is refused; so is this node own id', async (t) => {
  const a = await startMember(t, 1, []);
  const b = await startMember(t, 2, [a.addr]);
  await waitFor('alive', () => aliveSet(a.m).join() === '1,2');
  const { reply } = await rawHello(a.addr, { ...goodHello, nodeId: 2, uuid: 'impostor' });
  t.match(reply, { t: 'close', reason: 'node-id-conflict', message: /node id 2 is already connected as uuid .*, not impostor/ });
  const own = await rawHello(a.addr, { ...goodHello, nodeId: 1, uuid: 'impostor' });
  t.match(own.reply, { t: 'close', reason: 'node-id-conflict' });
  t.ok(a.m.isAlive(2), 'the real node 2 is untouched');
  t.equal(a.m.view().find((v) => v.id === 2)?.uuid, b.uuid);
});

t.test('a peers list naming the node itself is fine', async (t) => {
  const a = await startMember(t, 1, []);
  const b = await startMember(t, 2, [a.addr, '127.0.0.1:1', 'not-an-address']);
  await waitFor('alive', () => aliveSet(b.m).join() === '1,2');
  t.strictSame(b.m.connections().map((c) => c.nodeId), [1]);
});

t.test('garbage from a connection ends that connection only', async (t) => {
  const a = await startMember(t, 1, []);
  const b = await startMember(t, 2, [a.addr]);
  await waitFor('alive', () => aliveSet(a.m).join() === '1,2');
  const { host, port } = parseAddr(a.addr)!;
  const sock = connect({ host, port });
  sock.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  await new Promise<void>((resolve) => sock.on('close', () => resolve()).resume());
  t.ok(a.m.isAlive(2));
  t.ok(b.m.isAlive(1));
});

/** Nodes 1 and 2, each advertising its own proxy, so every connection between them goes through one; both alive. */
async function proxiedPair(t: Test) {
  const pa = await TcpProxy.start({ port: 1 });
  const pb = await TcpProxy.start({ port: 1 });
  t.teardown(() => pa.close());
  t.teardown(() => pb.close());
  const a = await startMember(t, 1, [pb.addr], { advertise: pa.addr });
  pa.retarget({ port: a.port });
  const b = await startMember(t, 2, [pa.addr], { advertise: pb.addr });
  pb.retarget({ port: b.port });
  await waitFor('connected through the proxies', () => a.m.isAlive(2) && b.m.isAlive(1));
  return { pa, pb, a, b };
}

t.test('a partition through the proxy (cut, then heal) is detected and healed', async (t) => {
  const { pa, pb, a, b } = await proxiedPair(t);
  t.ok(pa.bytes.up + pb.bytes.up > 0, 'traffic went through the proxies');

  const downAt: number[] = [];
  a.m.on('down', () => downAt.push(Date.now()));
  b.m.on('down', () => downAt.push(Date.now()));
  const cutAt = Date.now();
  pa.cut();
  pb.cut();
  await waitFor('both sides see the other down', () => !a.m.isAlive(2) && !b.m.isAlive(1), FAILURE_MS + 10_000);
  for (const at of downAt) t.ok(at - cutAt >= FAILURE_MS - 2 * HEARTBEAT_MS, 'declared by the failure timeout, not before');
  t.strictSame(a.m.connections(), []);
  pa.heal();
  pb.heal();
  await waitFor('healed', () => a.m.isAlive(2) && b.m.isAlive(1), 15_000);

  // A black hole: connections stay open but carry nothing; the failure timeout still finds it.
  pa.drop();
  pb.drop();
  await waitFor('both sides see the other down (drop)', () => !a.m.isAlive(2) && !b.m.isAlive(1), FAILURE_MS + 10_000);
  pa.heal();
  pb.heal();
  await waitFor('healed after drop', () => a.m.isAlive(2) && b.m.isAlive(1), 15_000);
  t.pass('partition detected and healed, both ways');
});

t.test('delay below the failure timeout does not make a node down', async (t) => {
  const pb = await TcpProxy.start({ port: 1 });
  t.teardown(() => pb.close());
  const a = await startMember(t, 1, []);
  const b = await startMember(t, 2, [a.addr], { advertise: pb.addr });
  pb.retarget({ port: b.port });
  await waitFor('alive', () => a.m.isAlive(2) && b.m.isAlive(1));
  const downs: number[] = [];
  a.m.on('down', (n) => downs.push(n.id));
  pb.delay(FAILURE_MS / 4);
  await new Promise((r) => setTimeout(r, 2 * FAILURE_MS));
  t.strictSame(downs, []);
  t.ok(a.m.isAlive(2) && b.m.isAlive(1));
});

/** Blocks this process's event loop for `ms` (every member in it stalls, as a node under a long GC does). */
function stall(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // busy: no timer, no socket read runs meanwhile
  }
}

t.test("a stall of a node's own event loop does not make its peers down", async (t) => {
  // After a stall the maintenance timer runs before the sockets are read, so the peers' heartbeats
  // sent meanwhile (waiting unread) looked like silence: every peer was marked down at once.
  const a = await startMember(t, 1, []);
  const b = await startMember(t, 2, [a.addr]);
  await waitFor('alive', () => a.m.isAlive(2) && b.m.isAlive(1));
  const downs: string[] = [];
  a.m.on('down', (n, why) => downs.push(`1 saw ${n.id}: ${why}`));
  b.m.on('down', (n, why) => downs.push(`2 saw ${n.id}: ${why}`));
  await new Promise((r) => setTimeout(r, 3 * HEARTBEAT_MS));
  stall(2.5 * FAILURE_MS);
  await new Promise((r) => setTimeout(r, 5 * HEARTBEAT_MS));
  t.strictSame(downs, [], 'no peer marked down for the stall');
  t.ok(a.m.isAlive(2) && b.m.isAlive(1));
  t.ok(a.logs.some((l) => l.msg === 'cluster: this node stalled; its peers are not judged on the silence' && Number(l.fields.ms) >= FAILURE_MS), 'the stall is logged with its length');
});

t.test("a peer silent since before this node's stall is still found down, soon after it", async (t) => {
  const { pa, pb, a } = await proxiedPair(t);
  pa.drop(); // heartbeats stop both ways; the connection stays open
  pb.drop();
  await new Promise((r) => setTimeout(r, FAILURE_MS / 2));
  stall(1.5 * FAILURE_MS);
  const after = Date.now();
  await waitFor('a sees b down', () => !a.m.isAlive(2), 10 * FAILURE_MS);
  const took = Date.now() - after;
  t.ok(took <= 2 * FAILURE_MS, `found down ${took} ms after the stall: its silence before the stall counted, the stall did not`);
});

t.test('options: failure timeout must exceed the heartbeat interval; no wildcard address to gossip', async (t) => {
  const { Membership } = await import('../../../src/cluster/index.js');
  const { silentLogger } = await import('../../../src/lib/logger.js');
  const { systemClock } = await import('../../../src/lib/clock.js');
  t.throws(
    () => new Membership({ selfId: 1, selfUuid: 'u', clusterId: 'c', uri: 'u', listen: { host: '127.0.0.1', port: 0 }, peers: [], heartbeatIntervalMs: 100, failureTimeoutMs: 100, logger: silentLogger, clock: systemClock }),
    { code: 'E_CONFIG_INVALID' },
  );
  t.throws(
    () => new Membership({ selfId: 1, selfUuid: 'u', clusterId: 'c', uri: 'u', listen: { host: '0.0.0.0', port: 7000 }, peers: [], heartbeatIntervalMs: 100, failureTimeoutMs: 500, logger: silentLogger, clock: systemClock }),
    { code: 'E_CONFIG_INVALID', message: /"0.0.0.0" is not an address other nodes can dial/ },
  );
});

t.test('a node that reconnects as a new process run within the timeout is reported down (restarted) then up', async (t) => {
  const a = await startMember(t, 1, []);
  const events: string[] = [];
  a.m.on('up', (n) => events.push(`up:${n.id}`));
  a.m.on('down', (n, reason) => events.push(`down:${n.id}:${reason}`));
  const { host, port } = parseAddr(a.addr)!;
  const join = async (incarnation: number): Promise<ReturnType<typeof connect>> => {
    const sock = connect({ host, port });
    sock.resume();
    sock.write(encodeFrame({ t: 'hello', ...goodHello, nodeId: 5, uuid: 'u5', incarnation }));
    await waitFor('node 5 alive', () => a.m.isAlive(5), 5000);
    return sock;
  };
  const first = await join(1);
  first.destroy(); // a crash: no close frame
  await waitFor('a saw the connection end', () => a.m.connections().length === 0, 5000);
  t.ok(a.m.isAlive(5), 'still alive: the failure timeout has not passed');
  const second = await join(2);
  await waitFor('the new run is seen', () => events.length === 3, 5000);
  t.strictSame(events, ['up:5', 'down:5:restarted', 'up:5']);
  second.destroy();
});
