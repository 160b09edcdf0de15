/**
 * The machine's limit for ingest: a bare uWebSockets.js server that only reads a request body (copying
 * each chunk, as the node must), gunzips it when it says Content-Encoding gzip (as the node does,
 * with the same async zlib), JSON.parses it and answers 200 `{}`. No validation, no storage, no
 * durability: whatever the node does beyond this is the node's own cost.
 *
 * Run as a child process: `node bench/ingest/parse-only-server.mjs [--port 0]`. It binds 127.0.0.1,
 * prints `parse-only ready at http://127.0.0.1:PORT` on stdout, serves `GET /api/v1/metrics` (rss,
 * eventLoopDelay) in the node's shape so the harness samples both the same way, and stops on
 * SIGTERM/SIGINT.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { gunzip } from 'node:zlib';
import { App, us_listen_socket_close, us_socket_local_port } from 'uWebSockets.js';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, host: { type: 'string', default: '127.0.0.1' } } });
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  process.stderr.write(`parse-only: --port must be an integer 0..65535, got "${values.port}"\n`);
  process.exit(2);
}

const ELD_RESOLUTION_MS = 20;
const eld = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
eld.enable();
/**
 * Node's histogram records the whole interval between samples (an idle loop reads ~20 ms at a 20 ms
 * resolution, measured on Node 20): subtract the interval to report the delay itself.
 * @param {number} ns
 */
const ms = (ns) => Math.max(0, Math.round((ns / 1e6 - ELD_RESOLUTION_MS) * 100) / 100);

/** @typedef {{ aborted: boolean }} Pending */

/**
 * @param {import('uWebSockets.js').HttpResponse} res
 * @param {Pending} pending
 * @param {string} status
 * @param {string} body
 */
function reply(res, pending, status, body) {
  if (pending.aborted) return;
  pending.aborted = true;
  res.cork(() => {
    res.writeStatus(status);
    res.writeHeader('content-type', 'application/json');
    res.end(body);
  });
}

/**
 * @param {import('uWebSockets.js').HttpResponse} res
 * @param {Pending} pending
 * @param {Buffer} body
 */
function parse(res, pending, body) {
  try {
    JSON.parse(body.toString('utf8'));
    reply(res, pending, '200 OK', '{}');
  } catch (err) {
    reply(res, pending, '400 Bad Request', JSON.stringify({ error: String(err) }));
  }
}

const app = App();

app.get('/api/v1/metrics', (res, req) => {
  const pending = { aborted: false };
  res.onAborted(() => (pending.aborted = true));
  const reset = req.getQuery('reset') === 'true';
  const mem = process.memoryUsage();
  const body = JSON.stringify({
    rss: mem.rss,
    heapUsed: mem.heapUsed,
    eventLoopDelay: { p50: ms(eld.percentile(50)), p99: ms(eld.percentile(99)), max: ms(eld.max), mean: ms(eld.mean) },
  });
  if (reset) eld.reset();
  reply(res, pending, '200 OK', body);
});

app.post('/*', (res, req) => {
  /** @type {Pending} */
  const pending = { aborted: false };
  res.onAborted(() => (pending.aborted = true));
  // Headers die with this callback: read them now.
  const gzipped = /gzip/i.test(req.getHeader('content-encoding'));
  /** @type {Buffer[]} */
  const chunks = [];
  let size = 0;
  res.onData((chunk, isLast) => {
    // The ArrayBuffer is neutered when this callback returns: copy it.
    chunks.push(Buffer.from(new Uint8Array(chunk)));
    size += chunk.byteLength;
    if (!isLast) return;
    const body = chunks.length === 1 ? /** @type {Buffer} */ (chunks[0]) : Buffer.concat(chunks, size);
    if (!gzipped) {
      parse(res, pending, body);
      return;
    }
    gunzip(body, (err, out) => {
      if (err !== null) reply(res, pending, '400 Bad Request', JSON.stringify({ error: String(err) }));
      else parse(res, pending, out);
    });
  });
});

app.any('/*', (res) => {
  res.writeStatus('404 Not Found').end('{}');
});

app.listen(values.host, port, (sock) => {
  if (!sock) {
    process.stderr.write(`parse-only: cannot listen on ${values.host}:${port}\n`);
    process.exit(1);
  }
  const actual = us_socket_local_port(sock);
  process.stdout.write(`parse-only ready at http://${values.host}:${actual} (pid ${process.pid})\n`);
  const stop = () => {
    us_listen_socket_close(sock);
    app.close();
    eld.disable();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
});
