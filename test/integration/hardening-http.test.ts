/**
 * Issue 24, defect 3, over raw sockets against a real node: a request without valid credentials is
 * answered 401 from its headers while its body is still coming (it was buffered whole before), on
 * every kind of route with a body; and request bodies together stay within
 * http.max_inflight_body_bytes (503 with Retry-After past it). The node answers /api/v1/status after.
 */
import t from 'tap';
import { connect, type Socket } from 'node:net';
import { startNode } from '../helpers/node-process.js';
import { api } from '../helpers/http.js';
import { createRepo } from '../helpers/query.js';

interface Partial {
  socket: Socket;
  /** Resolves with the response head (status line and headers) as soon as one arrives. */
  head: Promise<string>;
}

/** Sends a request's headers and the first `sent` bytes of a body of `length` bytes, and no more. */
function startRequest(url: string, path: string, headers: Record<string, string>, length: number, sent: number): Partial {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => undefined);
  const lines = [`POST ${path} HTTP/1.1`, `Host: ${hostname}:${port}`, `Content-Length: ${length}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', ''];
  socket.write(lines.join('\r\n'));
  if (sent > 0) socket.write(Buffer.alloc(sent, 0x61));
  const head = new Promise<string>((resolve, reject) => {
    let got = '';
    const timer = setTimeout(() => reject(new Error(`no answer to ${path} within 10 s (${got.length} bytes so far)`)), 10_000);
    socket.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (got.includes('\r\n\r\n')) {
        clearTimeout(timer);
        resolve(got.slice(0, got.indexOf('\r\n\r\n')));
      }
    });
    socket.on('close', () => {
      clearTimeout(timer);
      if (!got.includes('\r\n\r\n')) reject(new Error(`connection closed with no answer to ${path}`));
    });
  });
  return { socket, head };
}

const status = (head: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);

t.test('credentials are checked before the body is read (defect 3)', async (t) => {
  t.setTimeout(90_000);
  const node = await startNode(t);
  const repo = await createRepo(node.url, node.adminToken, 'preauth');
  const big = 32 * 1024 * 1024;
  const cases: [string, Record<string, string>, number][] = [
    ['/api/v1/ingest/humio-structured', { 'content-type': 'application/json' }, 401],
    ['/api/v1/ingest/humio-unstructured', { authorization: 'Bearer not-a-token' }, 401],
    ['/api/v1/ingest/raw/not-a-token', {}, 401],
    ['/api/v1/repositories/preauth/ingest', { authorization: 'Bearer nope' }, 401],
    ['/api/v1/repositories/preauth/files', { 'content-type': 'multipart/form-data; boundary=x' }, 401],
    ['/api/v1/repositories/preauth/query', { 'content-type': 'application/json' }, 401],
    ['/graphql', { 'content-type': 'application/json' }, 401],
    // An ingest token where an API token is needed: 403, also before the body.
    ['/api/v1/repositories/preauth/query', { authorization: `Bearer ${repo.ingestToken}` }, 403],
  ];
  for (const [path, headers, want] of cases) {
    // 64 KiB of a 32 MiB body sent; the answer must come without the rest.
    const r = startRequest(node.url, path, headers, big, 64 * 1024);
    const head = await r.head;
    r.socket.destroy();
    t.equal(status(head), want, `${path}: ${head.split('\r\n')[0]}`);
    if (want === 401) t.match(head.toLowerCase(), /www-authenticate: bearer/);
  }
  // Many strangers at once: each refused from its headers, none held.
  const strangers = Array.from({ length: 48 }, () => startRequest(node.url, '/api/v1/ingest/humio-structured', {}, big, 256 * 1024));
  const heads = await Promise.all(strangers.map((r) => r.head));
  for (const r of strangers) r.socket.destroy();
  t.ok(heads.every((h) => status(h) === 401), 'all 48 answered 401 with their bodies unsent');
  // A valid token still gets its body read and ingested.
  const ok = await api(node.url, '/api/v1/ingest/humio-structured', { token: repo.ingestToken, body: JSON.stringify([{ tags: { host: 'a' }, events: [{ timestamp: Date.now(), attributes: { x: 1 } }] }]) });
  t.equal(ok.status, 200, ok.text);
  t.equal((await api(node.url, '/api/v1/status')).status, 200);
});

t.test('bodies in flight together stay within http.max_inflight_body_bytes (defect 3)', async (t) => {
  t.setTimeout(90_000);
  const node = await startNode(t, { config: '[http]\nmax_inflight_body_bytes = 1048576\n' });
  const repo = await createRepo(node.url, node.adminToken, 'inflight');
  const auth = { authorization: `Bearer ${repo.ingestToken}`, 'content-type': 'application/json' };
  const body = Buffer.from(JSON.stringify([{ tags: { host: 'a' }, events: [{ timestamp: Date.now(), rawstring: 'x'.repeat(700_000) }] }]));
  // The first request holds 700 KB of the budget while its body is still coming.
  const first = startRequest(node.url, '/api/v1/ingest/humio-structured', auth, body.length, 0);
  first.socket.write(body.subarray(0, 1000));
  await new Promise((r) => setTimeout(r, 300));
  const second = startRequest(node.url, '/api/v1/ingest/humio-structured', auth, body.length, 0);
  const head = await second.head;
  second.socket.destroy();
  t.equal(status(head), 503, head.split('\r\n')[0]!);
  t.match(head.toLowerCase(), /retry-after: \d+/);
  // The first one finishes and is acknowledged; then there is room again.
  first.socket.write(body.subarray(1000));
  const firstHead = await first.head;
  first.socket.destroy();
  t.equal(status(firstHead), 200, firstHead.split('\r\n')[0]!);
  const again = await api(node.url, '/api/v1/ingest/humio-structured', { token: repo.ingestToken, body });
  t.equal(again.status, 200, again.text);
  t.equal((await api(node.url, '/api/v1/status')).status, 200);
});
