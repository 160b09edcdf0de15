/**
 * OutboundHttp against real servers on 127.0.0.1: success, error statuses and whether they are
 * worth a retry, redirects not followed, the response size cap, the timeout, refused targets
 * (no connection is even made), and connection failures.
 */
import t from 'tap';
import { createServer, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo, Socket } from 'node:net';
import { OutboundHttp, TargetPolicy } from '../../../src/alerts/index.js';
import { DeliveryError } from '../../../src/alerts/errors.js';

const connections: Socket[] = [];
let requests = 0;
const server: Server = createServer((req, res) => {
  requests++;
  const path = req.url ?? '/';
  req.resume();
  if (path === '/ok') return void res.end('fine');
  if (path === '/echo') {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    return void req.on('end', () => res.end(JSON.stringify({ method: req.method, ct: req.headers['content-type'], x: req.headers['x-test'], body: Buffer.concat(chunks).toString() })));
  }
  if (path === '/503') return void res.writeHead(503).end('busy ' + 'x'.repeat(1000));
  if (path === '/429') return void res.writeHead(429).end();
  if (path === '/404') return void res.writeHead(404).end('nope');
  if (path === '/302') return void res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
  if (path === '/big') {
    res.writeHead(200);
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sent = 0;
    const pump = (): void => {
      while (sent < 32 * 1024 * 1024) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end();
    };
    return pump();
  }
  // /hang: never answers.
});
server.on('connection', (s) => connections.push(s));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = (server.address() as AddressInfo).port;
const base = `http://127.0.0.1:${port}`;
t.teardown(() => {
  for (const s of connections) s.destroy();
  server.close();
});

const http = new OutboundHttp(new TargetPolicy(['127.0.0.1/32']), 1000);
t.teardown(() => http.close());
const timeout = (ms = 5000): AbortSignal => AbortSignal.timeout(ms);

async function failure(p: Promise<unknown>): Promise<DeliveryError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof DeliveryError) return err;
    throw err;
  }
  throw new Error('expected a DeliveryError');
}

t.test('2xx: the status and body', async (t) => {
  const r = await http.send({ method: 'POST', url: `${base}/echo`, headers: { 'content-type': 'application/json', 'x-test': 'yes' }, body: '{"a":1}' }, timeout());
  t.equal(r.status, 200);
  t.strictSame(JSON.parse(r.body), { method: 'POST', ct: 'application/json', x: 'yes', body: '{"a":1}' });
  t.equal(r.truncated, false);
});

t.test('error statuses: 5xx and 429 are transient, 4xx permanent; the body is quoted, shortened', async (t) => {
  const e503 = await failure(http.send({ method: 'GET', url: `${base}/503`, headers: {} }, timeout()));
  t.equal(e503.transient, true);
  t.equal(e503.code, 'E_ACTION_FAILED');
  t.match(e503.message, /^127\.0\.0\.1:\d+ answered HTTP 503: busy x+$/);
  t.ok(e503.message.length < 400, 'the quoted body is cut');
  t.equal((await failure(http.send({ method: 'GET', url: `${base}/429`, headers: {} }, timeout()))).transient, true);
  const e404 = await failure(http.send({ method: 'GET', url: `${base}/404`, headers: {} }, timeout()));
  t.equal(e404.transient, false);
  t.match(e404.message, /HTTP 404: nope/);
});

t.test('a redirect is not followed', async (t) => {
  const before = requests;
  const e = await failure(http.send({ method: 'GET', url: `${base}/302`, headers: {} }, timeout()));
  t.equal(e.code, 'E_TARGET_REFUSED');
  t.equal(e.transient, false);
  t.match(e.message, /answered 302 redirecting to http:\/\/169\.254\.169\.254\/; redirects are not followed/);
  t.equal(requests - before, 1);
});

t.test('the response read is capped', async (t) => {
  const started = Date.now();
  const r = await http.send({ method: 'GET', url: `${base}/big`, headers: {} }, timeout(10_000));
  t.equal(r.body.length, 1000);
  t.equal(r.truncated, true);
  t.ok(Date.now() - started < 5000, 'the rest of a 32 MiB body is not waited for');
  const capZero = new OutboundHttp(new TargetPolicy(['127.0.0.1/32']), 0);
  t.teardown(() => capZero.close());
  const z = await capZero.send({ method: 'GET', url: `${base}/ok`, headers: {} }, timeout());
  t.strictSame([z.body, z.truncated], ['', true]);
});

t.test('a server that does not answer times out (transient)', async (t) => {
  const started = Date.now();
  const e = await failure(http.send({ method: 'GET', url: `${base}/hang`, headers: {} }, timeout(300)));
  t.equal(e.transient, true);
  t.match(e.message, /did not answer in time \(alerts\.action_timeout_ms\)/);
  t.ok(Date.now() - started < 3000, `gave up after ${Date.now() - started} ms`);
});

t.test('a refused target is never connected to', async (t) => {
  // A server of its own, so that no other test's connections are counted.
  let seen = 0;
  const probe = createServer((_req, res) => res.end('reached'));
  probe.on('connection', () => seen++);
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  t.teardown(() => probe.close());
  const p = (probe.address() as AddressInfo).port;
  const strict = new OutboundHttp(new TargetPolicy([]), 1000);
  t.teardown(() => strict.close());
  for (const url of [`http://127.0.0.1:${p}/ok`, `http://localhost:${p}/ok`, `http://[::ffff:127.0.0.1]:${p}/ok`, `http://2130706433:${p}/ok`]) {
    const e = await failure(strict.send({ method: 'GET', url, headers: {} }, timeout()));
    t.equal(e.code, 'E_TARGET_REFUSED', url);
    t.equal(e.transient, false);
  }
  t.equal(seen, 0, 'no connection reached the server');
  const open = new OutboundHttp(new TargetPolicy(['127.0.0.1/32']), 1000);
  t.teardown(() => open.close());
  t.equal((await open.send({ method: 'GET', url: `http://127.0.0.1:${p}/ok`, headers: {} }, timeout())).body, 'reached', 'the same server is reachable when allowed');
  t.equal(seen, 1);
});

t.test('connection failures are transient; bad URLs permanent', async (t) => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const closedPort = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const e = await failure(http.send({ method: 'GET', url: `http://127.0.0.1:${closedPort}/`, headers: {} }, timeout()));
  t.equal(e.transient, true);
  t.match(e.message, /calling 127\.0\.0\.1:\d+ failed: ECONNREFUSED/);
  t.equal((await failure(http.send({ method: 'GET', url: 'ftp://127.0.0.1/', headers: {} }, timeout()))).transient, false);
  t.equal((await failure(http.send({ method: 'GET', url: 'not a url', headers: {} }, timeout()))).transient, false);
});

/** A self-signed certificate for 127.0.0.1 made with the openssl CLI, or null when there is none. */
async function selfSigned(): Promise<{ key: string; cert: string } | null> {
  const dir = await mkdtemp(join(tmpdir(), 'logsvc-tls-'));
  try {
    await new Promise<void>((resolve, reject) =>
      execFile(
        'openssl',
        ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
        { timeout: 20_000 },
        (err) => (err === null ? resolve() : reject(err)),
      ),
    );
    return { key: await readFile(join(dir, 'key.pem'), 'utf8'), cert: await readFile(join(dir, 'cert.pem'), 'utf8') };
  } catch {
    return null;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

t.test('TLS: an untrusted certificate fails for good unless ignoreSSL', async (t) => {
  const pair = await selfSigned();
  if (pair === null) return void t.pass('skipped: the openssl CLI is not available to make a certificate');
  const tls = createTlsServer(pair, (_req, res) => res.end('secure'));
  await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    tls.closeAllConnections();
    tls.close();
  });
  const tlsUrl = `https://127.0.0.1:${(tls.address() as AddressInfo).port}/`;
  const e = await failure(http.send({ method: 'GET', url: tlsUrl, headers: {} }, timeout()));
  t.equal(e.transient, false, 'not worth a retry');
  t.match(e.message, /TLS certificate of 127\.0\.0\.1:\d+ is not trusted \(DEPTH_ZERO_SELF_SIGNED_CERT\)/);
  const r = await http.send({ method: 'GET', url: tlsUrl, headers: {}, ignoreTls: true }, timeout());
  t.equal(r.body, 'secure', 'ignoreSSL accepts it');
});

t.test('a request undici refuses (a header value with a line break) fails for good, without a retry', async (t) => {
  const before = requests;
  const err = await http.send({ method: 'POST', url: `${base}/ok`, headers: { 'x-test': 'a\r\nInjected: yes' }, body: 'x' }, timeout()).catch((e: unknown) => e);
  t.ok(err instanceof DeliveryError, String(err));
  t.equal((err as DeliveryError).transient, false);
  t.match((err as DeliveryError).message, /^the request to 127\.0\.0\.1:\d+ is invalid: /);
  t.equal(requests, before, 'nothing was sent');
});
