/**
 * Cluster RPC over real connections between two membership instances: request/response, errors as
 * data, idempotency keys, timeouts that cancel the responder, streams with credit-based flow control,
 * early exit, and a cut link (through the TCP proxy) failing every pending request at once.
 */
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { LogsvcError } from '../../../src/lib/errors.js';
import { startMember, waitFor, type TestMember } from '../../helpers/membership.js';
import { TcpProxy } from '../../helpers/tcp-proxy.js';
import type { Teardown } from '../../helpers/node-process.js';
import { RpcChannel, RpcHandlers } from '../../../src/cluster/protocol/rpc.js';

async function pair(t: Teardown): Promise<{ a: TestMember; b: TestMember }> {
  const a = await startMember(t, 1, [], { requestTimeoutMs: 5000 });
  const b = await startMember(t, 2, [a.addr]);
  await waitFor('connected', () => a.m.isAlive(2) && b.m.isAlive(1));
  return { a, b };
}

t.test('request/response; errors travel as data', async (t) => {
  const { a, b } = await pair(t);
  b.m.handle('echo', (body, ctx) => ({ body, from: ctx.from, key: ctx.key ?? null }));
  b.m.handle('bad-input', () => {
    throw new LogsvcError('E_VALIDATION', 'field "x" must be a number');
  });
  b.m.handle('bug', () => {
    throw new TypeError('oops');
  });
  b.m.handle('async', async () => {
    await sleep(20);
    return Buffer.from('bytes');
  });
  t.strictSame(await a.m.request(2, 'echo', { n: 1, s: 'x' }), { body: { n: 1, s: 'x' }, from: 1, key: null });
  t.strictSame(await a.m.request(2, 'echo', null, { key: 'op-42' }), { body: null, from: 1, key: 'op-42' }, 'idempotency key reaches the handler');
  t.same(Buffer.from((await a.m.request(2, 'async', {})) as Uint8Array), Buffer.from('bytes'));
  await t.rejects(a.m.request(2, 'bad-input', {}), { code: 'E_VALIDATION', httpStatus: 400, message: 'field "x" must be a number' });
  await t.rejects(a.m.request(2, 'bug', {}), { code: 'E_INTERNAL', message: /TypeError: oops/ });
  await t.rejects(a.m.request(2, 'nope', {}), { code: 'E_NOT_FOUND', message: /no cluster request type "nope"/ });
  await t.rejects(a.m.request(9, 'echo', {}), { code: 'E_UNAVAILABLE', retriable: true, message: /node 9 is not connected/ });
  // Many at once, answered out of order, each to its own caller.
  b.m.handle('slow-echo', async (body) => {
    await sleep(Math.random() * 30);
    return body;
  });
  const got = await Promise.all(Array.from({ length: 200 }, (_, i) => a.m.request(2, 'slow-echo', i)));
  t.strictSame(got, Array.from({ length: 200 }, (_, i) => i));
  // Both directions on the one connection.
  a.m.handle('echo-a', (body) => body);
  t.equal(await b.m.request(1, 'echo-a', 'hi'), 'hi');
});

t.test('a request past its timeout fails E_TIMEOUT and is cancelled on the responder', async (t) => {
  const { a, b } = await pair(t);
  let aborted = false;
  b.m.handle('hang', (_body, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', () => {
    aborted = true;
    resolve('too late');
  })));
  await t.rejects(a.m.request(2, 'hang', {}, { timeoutMs: 200 }), { code: 'E_TIMEOUT', retriable: true, message: /"hang" to node 2 got no answer within 200 ms/ });
  await waitFor('the handler saw the cancel', () => aborted, 5000);
  t.equal(await a.m.request(2, 'nope-after', {}).catch((e: LogsvcError) => e.code), 'E_NOT_FOUND', 'the connection still works');
});

t.test('streams: chunks in order, then the end; credit bounds what is sent ahead', async (t) => {
  const { a, b } = await pair(t);
  let produced = 0;
  b.m.handleStream('count', async function* count(body) {
    const n = body as number;
    for (let i = 0; i < n; i++) {
      produced++;
      yield { i };
    }
  });
  const got: number[] = [];
  const window = 8;
  let maxAhead = 0;
  for await (const chunk of a.m.stream(2, 'count', 100, { window })) {
    got.push((chunk as { i: number }).i);
    if (got.length % 10 === 0) await sleep(30); // a slow consumer
    maxAhead = Math.max(maxAhead, produced - got.length);
  }
  t.strictSame(got, Array.from({ length: 100 }, (_, i) => i));
  t.ok(maxAhead <= window + 1, `the producer ran at most a window ahead (${maxAhead})`);

  // A bigger window lets it run further ahead, so the bound above is the credit's doing.
  produced = 0;
  let seen = 0;
  let ahead = 0;
  for await (const _ of a.m.stream(2, 'count', 200, { window: 64 })) {
    seen++;
    if (seen === 1) await sleep(200);
    ahead = Math.max(ahead, produced - seen);
  }
  t.ok(ahead > window + 1, `with window 64 the producer got ${ahead} ahead`);
});

t.test('a stream error after some chunks reaches the consumer after those chunks', async (t) => {
  const { a, b } = await pair(t);
  b.m.handleStream('fails', async function* fails() {
    yield 1;
    yield 2;
    throw new LogsvcError('E_QUERY_LIMIT', 'too many groups');
  });
  const got: unknown[] = [];
  await t.rejects(
    (async () => {
      for await (const c of a.m.stream(2, 'fails', null)) got.push(c);
    })(),
    { code: 'E_QUERY_LIMIT', message: 'too many groups' },
  );
  t.strictSame(got, [1, 2]);
  await t.rejects(
    (async () => {
      for await (const _ of a.m.stream(2, 'no-such-stream', null)) t.fail('no chunk');
    })(),
    { code: 'E_NOT_FOUND' },
  );
  // A handler that throws before it returns an iterable.
  b.m.handleStream('throws-at-once', () => {
    throw new LogsvcError('E_VALIDATION', 'bad body');
  });
  await t.rejects(
    (async () => {
      for await (const _ of a.m.stream(2, 'throws-at-once', null)) t.fail('no chunk');
    })(),
    { code: 'E_VALIDATION', message: 'bad body' },
  );
  // A unary type asked as a stream (and the reverse) is not found.
  b.m.handle('unary-only', () => 1);
  await t.rejects(a.m.stream(2, 'unary-only', null).next(), { code: 'E_NOT_FOUND' });
  await t.rejects(a.m.request(2, 'fails', null), { code: 'E_NOT_FOUND' });
  await t.rejects(
    (async () => {
      for await (const _ of a.m.stream(7, 'fails', null)) t.fail('no chunk');
    })(),
    { code: 'E_UNAVAILABLE' },
  );
});

t.test('leaving a stream early cancels the producer', async (t) => {
  const { a, b } = await pair(t);
  let finished = false;
  let produced = 0;
  b.m.handleStream('endless', async function* endless(_body, ctx) {
    try {
      while (!ctx.signal.aborted) {
        produced++;
        yield produced;
      }
    } finally {
      finished = true;
    }
  });
  let n = 0;
  for await (const _ of a.m.stream(2, 'endless', null, { window: 4 })) if (++n === 10) break;
  await waitFor('the producer stopped', () => finished, 5000);
  const at = produced;
  await sleep(100);
  t.equal(produced, at, 'nothing more is produced');
});

t.test('a stream that stalls fails E_TIMEOUT', async (t) => {
  const { a, b } = await pair(t);
  b.m.handleStream('stall', async function* stall(_b, ctx) {
    yield 'first';
    await new Promise((r) => ctx.signal.addEventListener('abort', r));
  });
  const got: unknown[] = [];
  await t.rejects(
    (async () => {
      for await (const c of a.m.stream(2, 'stall', null, { timeoutMs: 300 })) got.push(c);
    })(),
    { code: 'E_TIMEOUT' },
  );
  t.strictSame(got, ['first']);
});

t.test('a cut link fails every pending request at once with a retriable error', async (t) => {
  const proxy = await TcpProxy.start({ port: 1 });
  t.teardown(() => proxy.close());
  // Only a dials (b has no peers and is lower priority for duplicates: a has the lower id), through the proxy.
  const b = await startMember(t, 2, []);
  const a = await startMember(t, 1, [proxy.addr], { requestTimeoutMs: 60_000 });
  proxy.retarget({ port: b.port });
  await waitFor('connected', () => a.m.isAlive(2) && b.m.isAlive(1));
  t.equal(a.m.connections()[0]?.direction, 'outbound');
  let started = 0;
  b.m.handle('wait', (_body, ctx) => {
    started++;
    return new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve(null)));
  });
  b.m.handleStream('wait-stream', async function* ws(_body, ctx) {
    started++;
    yield 'one';
    await new Promise((r) => ctx.signal.addEventListener('abort', r));
  });
  const pending = Array.from({ length: 5 }, () => a.m.request(2, 'wait', {}).then(() => 'answered', (e: LogsvcError) => e));
  const got: unknown[] = [];
  const streamed = (async () => {
    try {
      for await (const c of a.m.stream(2, 'wait-stream', null)) got.push(c);
      return 'ended';
    } catch (e) {
      return { got, e: e as LogsvcError };
    }
  })();
  await waitFor('all started on b, the first chunk received', () => started === 6 && got.length === 1, 10_000);
  const cutAt = Date.now();
  proxy.cut();
  const results = await Promise.all(pending);
  const elapsed = Date.now() - cutAt;
  for (const r of results) t.match(r, { code: 'E_UNAVAILABLE', retriable: true, message: /connection to node 2 ended/ });
  t.ok(elapsed < 30_000, `failed at the cut, not at the 60 s timeout (${elapsed} ms)`);
  const s = await streamed;
  t.match(s, { got: ['one'], e: { code: 'E_UNAVAILABLE', retriable: true } });
  // After the heal the same calls work again (a redials).
  proxy.heal();
  b.m.handle('ping', () => 'pong');
  await waitFor('reconnected', () => a.m.connections().length === 1, 15_000);
  t.equal(await a.m.request(2, 'ping', {}), 'pong');
});

t.test('one handler per type', async (t) => {
  const { b } = await pair(t);
  b.m.handle('x', () => 1);
  t.throws(() => b.m.handle('x', () => 2), /already has a handler/);
  t.throws(() => b.m.handleStream('x', async function* none() {}), /already has a handler/);
});

t.test('through a slow link answers arrive; through a black hole pending requests fail at the failure timeout', async (t) => {
  const proxy = await TcpProxy.start({ port: 1 });
  t.teardown(() => proxy.close());
  const b = await startMember(t, 2, []);
  const a = await startMember(t, 1, [proxy.addr], { requestTimeoutMs: 60_000 });
  proxy.retarget({ port: b.port });
  await waitFor('connected', () => a.m.isAlive(2) && b.m.isAlive(1));
  b.m.handle('echo', (body) => body);
  b.m.handle('never', (_b, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve(null))));
  proxy.delay(150);
  const before = proxy.bytes.down;
  t.strictSame(await a.m.request(2, 'echo', { big: 'x'.repeat(100_000) }), { big: 'x'.repeat(100_000) });
  t.ok(proxy.bytes.down - before > 100_000, 'the answer went through the proxy');
  proxy.heal();
  proxy.drop();
  const droppedAt = Date.now();
  const err = (await a.m.request(2, 'never', {}).catch((e: unknown) => e)) as { code: string; retriable: boolean };
  t.match(err, { code: 'E_UNAVAILABLE', retriable: true });
  t.ok(Date.now() - droppedAt < 30_000, 'failed when the silent link was given up, not at the 60 s timeout');
});

t.test('a responder serves at most 256 requests at once per connection; more are refused, retriable', async (t) => {
  const { a, b } = await pair(t);
  const releases: (() => void)[] = [];
  b.m.handle('hold', () => new Promise<string>((resolve) => releases.push(() => resolve('done'))));
  const all = Array.from({ length: 300 }, () => a.m.request(2, 'hold', {}).then((v) => v, (e: LogsvcError) => e.code));
  await waitFor('256 held', () => releases.length === 256, 10_000);
  await sleep(100);
  t.equal(releases.length, 256, 'no more than the bound reached the handler');
  for (const r of releases) r();
  const results = await Promise.all(all);
  t.equal(results.filter((r) => r === 'done').length, 256);
  t.equal(results.filter((r) => r === 'E_TOO_MANY_REQUESTS').length, 44);
});

t.test('a stream whose chunk cannot be sent (the connection going, not yet closed) closes its handler', async (t) => {
  // The window this covers: a socket destroyed by the peer's reset is not open any more, but its
  // 'close' (which aborts served requests) comes a turn later; a chunk sent meanwhile is refused.
  // The handler must still be closed then, or it stays suspended holding what it took (a
  // segment.read's send slot and file handle: enough of those and a node refuses every copy).
  const handlers = new RpcHandlers();
  let open = 0;
  handlers.handleStream('file', async function* file() {
    open++;
    try {
      for (let i = 0; i < 100; i++) yield i;
    } finally {
      open--;
    }
  });
  const sent: string[] = [];
  let accept = 2; // the connection takes two messages, then is gone
  const ch = new RpcChannel(2, (msg) => {
    if (accept <= 0) return false;
    accept--;
    sent.push(msg.t);
    return true;
  }, handlers);
  ch.onMessage({ t: 'req', id: 1, type: 'file', body: null, window: 8 });
  await waitFor('the pump stopped', () => accept === 0 && open === 0, 2000).catch(() => undefined);
  t.same(sent, ['chunk', 'chunk'], 'two chunks went out, the third was refused');
  t.equal(open, 0, 'the handler was closed (its finally ran)');
  ch.close('gone');
  t.equal(open, 0);
});
