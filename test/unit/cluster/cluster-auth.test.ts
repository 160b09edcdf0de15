/**
 * Cluster-port authentication over real TCP on 127.0.0.1: nodes with the same secret join; a node
 * with another secret, or none, is refused with reason "auth" (logged, counted) and can neither
 * join nor make requests; a raw client that knows no secret gets nothing past the hello; the
 * secret itself never crosses the wire.
 */
import t from 'tap';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { encodeFrame, FrameParser, PROTOCOL_VERSION, type Message } from '../../../src/cluster/protocol/frames.js';
import { parseAddr } from '../../../src/cluster/index.js';
import { aliveSet, HEARTBEAT_MS, startMember, waitFor, type TestMember } from '../../helpers/membership.js';

const SECRET = Buffer.from('the-right-cluster-secret-42');
const OTHER = Buffer.from('another-cluster-secret-4242');

function authRefusals(n: TestMember): { level: string; msg: string; fields: Record<string, unknown> }[] {
  return n.logs.filter((l) => l.fields.reason === 'auth');
}

t.test('the same secret joins; requests flow', async (t) => {
  const a = await startMember(t, 1, [], { secret: SECRET });
  const b = await startMember(t, 2, [a.addr], { secret: Buffer.from(SECRET) });
  a.m.handle('echo', async (body) => body);
  for (const n of [a, b]) await waitFor(`node ${n.id} sees both alive`, () => aliveSet(n.m).join() === '1,2');
  t.strictSame(await b.m.request(1, 'echo', { x: 1 }), { x: 1 });
  t.equal(a.m.authFailures + b.m.authFailures, 0);
});

t.test('another secret is refused on both sides: logged, counted, never joined, no request served', async (t) => {
  const a = await startMember(t, 1, [], { secret: SECRET });
  let served = 0;
  a.m.handle('segment.read', async () => {
    served++;
    return 'data';
  });
  const x = await startMember(t, 2, [a.addr], { secret: OTHER });
  await waitFor('both sides log the auth refusal', () => authRefusals(a).length > 0 && authRefusals(x).length > 0);
  t.match(authRefusals(a)[0], { level: 'warn', msg: 'cluster peer refused', fields: { reason: 'auth', detail: /authentication failed: the peer \(calling itself node 2\) did not prove this cluster's secret/ } });
  t.ok(a.m.authFailures >= 1, 'counted on the refusing node');
  await new Promise((r) => setTimeout(r, 5 * HEARTBEAT_MS));
  t.strictSame(aliveSet(a.m), [1], 'the impostor never joined');
  t.strictSame(aliveSet(x.m), [2]);
  t.equal(a.m.view().length, 1, 'not even a known member');
  await t.rejects(x.m.request(1, 'segment.read', { id: 'x', from: 0 }), { code: 'E_UNAVAILABLE' }, 'no channel to ask through');
  t.equal(served, 0, 'nothing served');
});

t.test('a node without a secret and a node with one refuse each other', async (t) => {
  const a = await startMember(t, 1, [], { secret: SECRET });
  const open = await startMember(t, 2, [a.addr]);
  await waitFor('refusals', () => authRefusals(a).length > 0 && authRefusals(open).length > 0);
  t.match(authRefusals(open).map((l) => l.fields.detail).join('\n'), /this node has none|does not authenticate/);
  await new Promise((r) => setTimeout(r, 5 * HEARTBEAT_MS));
  t.strictSame(aliveSet(a.m), [1]);
});

t.test('a raw client without the secret gets no further than the hello; the secret is not on the wire', async (t) => {
  const a = await startMember(t, 1, [], { secret: SECRET });
  const b = await startMember(t, 2, [], { secret: SECRET });
  // Everything the two nodes say to each other passes through a proxy that records it.
  const seen: Buffer[] = [];
  const socks = new Set<Socket>();
  const proxy = createServer((down) => {
    const up = connect(parseAddr(a.addr)!);
    for (const [from, to] of [[down, up], [up, down]] as const) {
      socks.add(from);
      from.on('data', (chunk: Buffer) => {
        seen.push(Buffer.from(chunk));
        to.write(chunk);
      });
      from.on('error', () => to.destroy());
      from.on('close', () => to.destroy());
    }
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => {
    for (const s of socks) s.destroy();
    proxy.close();
  });
  const proxyPort = (proxy.address() as AddressInfo).port;
  const c = await startMember(t, 3, [`127.0.0.1:${proxyPort}`], { secret: SECRET });
  await waitFor('node 3 joins through the proxy', () => aliveSet(c.m).includes(1));
  const wire = Buffer.concat(seen);
  t.ok(wire.length > 0, 'the proxy saw the handshake');
  t.equal(wire.indexOf(SECRET), -1, 'the secret never crossed the wire');
  void b;

  // A raw client: a well-formed hello, then a heartbeat and a request without proving anything.
  const { host, port } = parseAddr(a.addr)!;
  const sock = connect({ host, port });
  const parser = new FrameParser();
  const got: Message[] = [];
  sock.on('data', (chunk: Buffer) => got.push(...parser.push(chunk)));
  sock.write(encodeFrame({ t: 'hello', version: PROTOCOL_VERSION, clusterId: 'test-cluster', nodeId: 9, uuid: 'u9', uri: 'http://x', addr: '127.0.0.1:1', incarnation: 1, nonce: Buffer.alloc(32, 7), auth: true }));
  sock.write(encodeFrame({ t: 'req', id: 1, type: 'segment.read', body: { id: 'x', from: 0 } }));
  await new Promise<void>((resolve) => sock.on('close', () => resolve()));
  t.equal(got[0]?.t, 'hello', "the node's own hello");
  t.equal(got[1]?.t, 'auth', 'its proof (useless without the secret)');
  t.match(got.at(-1), { t: 'close', reason: 'protocol-error' }, 'the request in place of a proof ends the connection');
  t.notOk(got.some((m) => m.t === 'res' || m.t === 'hb'), 'no answer and no heartbeat');
  t.notOk(aliveSet(a.m).includes(9));
});
