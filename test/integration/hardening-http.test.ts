/**
 * Issue 24, defect 3, over raw sockets against a real node: a request without valid credentials is
 * answered 401 from its headers while its body is still coming (it was buffered whole before), on
 * every kind of route with a body; a client that writes its whole body before reading (a raw
 * socket, node:http with and without keep-alive, curl) reads that 401 rather than a reset, and the
 * refused bodies are dropped, never held; and request bodies together stay within
 * http.max_inflight_body_bytes (503 with Retry-After past it). The node answers /api/v1/status after.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { sampleRss, vmRss } from '../helpers/rss.js';
import { startNode, tempDir } from '../helpers/node-process.js';
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

/** Runs a command to its end (bounded by the command's own options): exit code and output. */
function run(cmd: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

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

/**
 * What a plain client does: writes its whole body, then reads the answer. A refused request is
 * answered at once and the rest of its body read past and dropped (src/http/server.ts
 * drainsRefusedBody), so such a client reads its 401. (Before, the node closed the connection
 * after the answer and the client's remaining bytes reset it: ECONNRESET, no 401.)
 */
function wholeBodyThenRead(url: string, path: string, headers: Record<string, string>, body: Buffer): Promise<number | string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let got = '';
    let done = false;
    const finish = (r: number | string): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => finish(`no answer within 60 s (${got.length} bytes read)`), 60_000);
    socket.on('error', (err: NodeJS.ErrnoException) => finish(`error ${err.code ?? err.message}`));
    const head = [`POST ${path} HTTP/1.1`, `Host: ${hostname}:${port}`, `Content-Length: ${body.length}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', ''].join('\r\n');
    socket.write(head);
    // Only once every byte of the body is handed to the kernel does the client start reading.
    socket.write(body, (err) => {
      if (err !== undefined && err !== null) return finish(`error writing the body: ${(err as NodeJS.ErrnoException).code ?? err.message}`);
      socket.on('data', (d: Buffer) => {
        got += d.toString('latin1');
        if (got.includes('\r\n\r\n')) finish(status(got));
      });
      socket.on('close', () => finish(`closed with ${got.length} bytes read`));
    });
  });
}

/**
 * node:http's client: a POST with the whole body; the status, or the error it met. Without an agent
 * it asks for the connection to be closed after the request (`Connection: close`); with a
 * keep-alive agent it keeps it.
 */
function nodeHttpPost(url: string, path: string, headers: Record<string, string>, body: Buffer, agent: Agent | false): Promise<{ status: number; error: string | null; finished: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    let status = 0;
    let error: string | null = null;
    let finished = false;
    let ended = false;
    const timer = setTimeout(() => {
      error ??= 'no answer within 60 s';
      req.destroy();
    }, 60_000);
    const req = request({ host: hostname, port: Number(port), method: 'POST', path, headers: { ...headers, 'content-length': String(body.length) }, agent }, (res) => {
      status = res.statusCode ?? 0;
      res.resume();
      res.on('end', () => (ended = true));
    });
    req.on('finish', () => (finished = true));
    req.on('error', (err: NodeJS.ErrnoException) => (error ??= `${err.code ?? err.message}`));
    // Closed once both the body was sent (or failed) and the answer read (or failed).
    req.on('close', () => {
      clearTimeout(timer);
      // A response that ended cleanly counts; a reset met on the way is reported.
      resolve({ status: ended ? status : 0, error, finished });
    });
    req.end(body);
  });
}

t.test('a client that writes its whole 32 MiB body before reading gets the 401, not a reset (defect 3)', async (t) => {
  t.setTimeout(240_000);
  const node = await startNode(t);
  const big = Buffer.alloc(32 * 1024 * 1024, 0x61);
  const path = '/api/v1/ingest/humio-structured';
  const json = { 'content-type': 'application/json' };

  t.equal(await wholeBodyThenRead(node.url, path, json, big), 401, 'raw socket: whole body written, then 401 read');
  t.equal(await wholeBodyThenRead(node.url, path, { ...json, authorization: 'Bearer not-a-token' }, big), 401, 'raw socket, unknown token');

  // Asking for the connection to be closed: uWS closes it as soon as the answer ends, so the node
  // reads the rest of the body first (src/http/server.ts answerRefusal).
  t.equal(await wholeBodyThenRead(node.url, path, { ...json, connection: 'close' }, big), 401, 'raw socket, Connection: close');
  t.same(await nodeHttpPost(node.url, path, json, big, false), { status: 401, error: null, finished: true }, 'node:http request (Connection: close): 401, the body sent in full, no error');
  const keepAlive = new Agent({ keepAlive: true });
  t.same(await nodeHttpPost(node.url, path, json, big, keepAlive), { status: 401, error: null, finished: true }, 'node:http request (keep-alive): 401, the body sent in full, no error');
  keepAlive.destroy();

  // curl, with and without waiting for 100-continue (-H 'Expect:' sends the body at once).
  const dir = await tempDir(t, 'logsvc-unauth-body-');
  const file = join(dir, 'body.json');
  await writeFile(file, big);
  for (const expect of [[], ['-H', 'Expect:']]) {
    const r = await run('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '60', ...expect, '-H', 'Content-Type: application/json', '--data-binary', `@${file}`, `${node.url}${path}`]);
    t.same({ code: r.code, out: r.stdout, err: r.stderr }, { code: 0, out: '401', err: '' }, `curl ${expect.join(' ') || '(waits for 100-continue)'}: 401`);
  }

  // Sixteen at once, each writing its whole body: all read their 401, and none of the bodies is held.
  const idle = await vmRss(node.proc.pid!);
  const rss = sampleRss(node.proc.pid!);
  const answers = await Promise.all(Array.from({ length: 16 }, () => wholeBodyThenRead(node.url, path, json, big)));
  const peak = await rss.stop();
  t.same(answers, Array(16).fill(401), `16 at once: ${answers.join(' ')}`);
  // 16 bodies of 32 MiB are 512 MiB; draining holds none of them (generous bound for the loaded machine).
  t.ok(peak - idle < 160 * 1024 * 1024, `RSS rose by ${((peak - idle) / 2 ** 20).toFixed(0)} MiB while 512 MiB of refused bodies arrived (idle ${(idle / 2 ** 20).toFixed(0)} MiB)`);

  // The connection is kept after a drained refusal: a valid request follows on it.
  t.equal((await api(node.url, '/api/v1/status')).status, 200);
});

/** A body of unknown length (chunked) is not drained: the 401 comes and the connection is closed. */
t.test('a refused chunked body: the answer, then the connection closed', async (t) => {
  t.setTimeout(60_000);
  const node = await startNode(t);
  const { hostname, port } = new URL(node.url);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => undefined);
  socket.write(`POST /api/v1/ingest/humio-structured HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10000\r\n${'a'.repeat(0x10000)}\r\n`);
  const text = await new Promise<string>((resolve) => {
    let got = '';
    socket.on('data', (d: Buffer) => (got += d.toString('latin1')));
    socket.on('close', () => resolve(got));
    setTimeout(() => resolve(`${got} (still open after 20 s)`), 20_000);
  });
  t.equal(status(text), 401, text.split('\r\n')[0]!);
  t.match(text.toLowerCase(), /connection: close/);
  t.notMatch(text, /still open/);
  t.equal((await api(node.url, '/api/v1/status')).status, 200);
});
