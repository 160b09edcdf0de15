/**
 * The uWebSockets.js front door, and the project's only importer of that package. One catch-all
 * handler reads everything it needs from the request synchronously (uWS requests die when the
 * callback returns), registers onAborted before any await, enforces the body limit while reading,
 * then runs the matched handler and writes its reply corked.
 */
import { STATUS_CODES } from 'node:http';
import { Readable } from 'node:stream';
import type { HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { describeError, isLogsvcError, LogsvcError } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import { SlabPool } from '../lib/slab-pool.js';
import type { Router } from './router.js';
import { text, type Reply, type RequestInfo, type ResponseStream, type Route, type StreamedHandler } from './types.js';

export interface HttpServerOptions {
  host: string;
  port: number;
  maxHeaderBytes: number;
  maxApiBodyBytes: number;
  maxIngestBodyBytes: number;
  /** Body limit of file uploads (multipart). */
  maxUploadBodyBytes: number;
  /**
   * Bytes all request bodies being received or handled may hold together (http.max_inflight_body_bytes);
   * a request that would pass it is answered 503 with Retry-After before its body is read. A request
   * arriving when no body is held is always taken (within its own limit).
   */
  maxInflightBodyBytes: number;
  logger: Logger;
  /** Called once per answered request: the route pattern (or "(unmatched)"), method, status and seconds to the reply. */
  onReply?: (route: string, method: string, status: number, seconds: number) => void;
}

export interface HttpServer {
  readonly port: number;
  /** Resolves when no request is being handled, or after `timeoutMs`. */
  drain(timeoutMs: number): Promise<void>;
  /** Stops accepting connections; with `force`, also drops open ones. */
  close(force?: boolean): void;
}

/**
 * A request refused from its headers (credentials, a stopping node) is answered without reading its
 * body into memory, and so that a client which sends its whole body before it reads the answer gets
 * the answer, not a reset (a socket closed with bytes still unread sends one):
 *
 * - a body of declared length within the route's own limit, on a connection that stays open: the
 *   answer at once; the rest of the body is read past and dropped by uWebSockets.js (no onData
 *   handler is registered, so uWS's parser discards it) and the connection kept. uWS bounds the
 *   time: once a response has ended its idle timer (10 s, HTTP_IDLE_TIMEOUT_S) runs whatever the
 *   client sends. Measured: a client trickling 100 KB/s after its 401 was closed 12 s later, while
 *   one with an onData handler was still open after 40 s (uWS re-arms the timer for readers that
 *   keep up 16 KB/s);
 * - the same on a connection the client asked to close (`Connection: close`, e.g. node:http without
 *   a keep-alive agent): uWS closes such a connection as soon as its answer ends, so the rest of
 *   the body is read and dropped first, then the answer sent — or sent when REFUSED_DRAIN_MS have
 *   passed, and the connection closed;
 * - a body of unknown length (chunked) or over the limit is not read: the answer, and the
 *   connection closed.
 */
const REFUSED_DRAIN_MS = 10_000;

function answerRefusal(res: HttpResponse, pending: Pending, refusal: Reply, declared: string | undefined, connection: string | undefined, limit: number): void {
  const n = declared === undefined ? Number.NaN : Number(declared);
  if (!(Number.isSafeInteger(n) && n >= 0 && n <= limit)) {
    write(res, pending, refusal, true);
    return;
  }
  if (connection === undefined || !/(^|[\s,])close($|[\s,])/i.test(connection)) {
    write(res, pending, refusal, false);
    return;
  }
  const timer = setTimeout(() => write(res, pending, refusal, true), REFUSED_DRAIN_MS);
  pending.onAbort = () => clearTimeout(timer);
  res.onData((_chunk, isLast) => {
    if (!isLast || pending.aborted) return;
    clearTimeout(timer);
    write(res, pending, refusal, true);
  });
}

/** The stream of a streamed request body (Route.streamed) reads this much ahead of its reader. */
const STREAM_BUFFER_BYTES = 1024 * 1024;

const statusLine = (code: number): string => `${code} ${STATUS_CODES[code] ?? 'Unknown'}`;

interface Pending {
  aborted: boolean;
  /** Set by a streamed reply: the client left mid-stream. */
  onAbort?: () => void;
  /** Reports the reply's status to the metrics (set when the server has an onReply). */
  observe?: (status: number) => void;
}

let inFlight = 0;

function write(res: HttpResponse, pending: Pending, reply: Reply, closeConnection = false, head = false): void {
  if (pending.aborted) return;
  if (reply.stream !== undefined && !head) {
    stream(res, pending, reply, reply.stream);
    return;
  }
  pending.aborted = true; // a response may be written once
  inFlight--;
  pending.observe?.(reply.status);
  res.cork(() => {
    res.writeStatus(statusLine(reply.status));
    if (reply.headers !== undefined) for (const [k, v] of Object.entries(reply.headers)) res.writeHeader(k, v);
    // Said, not only done: a client that is not told may send its next request on this connection
    // as it closes ("other side closed").
    if (closeConnection) res.writeHeader('connection', 'close');
    // A HEAD response carries the GET response's headers but never its body. (uWS's endWithoutBody
    // leaves the connection unusable in this version, so an empty end() it is: Content-Length 0.)
    res.end(head ? '' : (reply.body ?? ''), closeConnection);
  });
}

/** Status and headers now, then chunks as the producer writes them (chunked transfer encoding). */
function stream(res: HttpResponse, pending: Pending, reply: Reply, produce: (out: ResponseStream) => void): void {
  const listeners: (() => void)[] = [];
  let ended = false;
  // Producers waiting for the client to take what uWS buffered (backpressure).
  let waiters: (() => void)[] = [];
  let watching = false;
  const wake = (): void => {
    watching = false;
    const w = waiters;
    waiters = [];
    for (const f of w) f();
  };
  const finish = (how: () => void): void => {
    if (out.closed) return;
    ended = true;
    pending.aborted = true;
    inFlight--;
    wake();
    how();
  };
  const out: ResponseStream = {
    get closed() {
      return ended || pending.aborted;
    },
    write(chunk) {
      // An empty chunk would read as the end of a chunked body.
      if (out.closed || chunk === '') return true;
      let ok = true;
      res.cork(() => {
        ok = res.write(chunk);
      });
      if (!ok && !watching) {
        watching = true;
        // Called when the socket drained what uWS held; nothing is retried here (uWS kept the chunk).
        res.onWritable(() => {
          wake();
          return true;
        });
      }
      return ok;
    },
    writable() {
      if (out.closed || !watching) return Promise.resolve();
      return new Promise((resolve) => waiters.push(resolve));
    },
    end: () => finish(() => res.cork(() => res.end())),
    abort: () => finish(() => res.close()),
    onClose(listener) {
      listeners.push(listener);
    },
  };
  pending.onAbort = () => {
    wake();
    if (ended) return;
    ended = true;
    for (const l of listeners) l();
  };
  pending.observe?.(reply.status);
  res.cork(() => {
    res.writeStatus(statusLine(reply.status));
    if (reply.headers !== undefined) for (const [k, v] of Object.entries(reply.headers)) res.writeHeader(k, v);
  });
  produce(out);
}

/** Refused credentials are logged (the node's own logs show failed logins), at most this many a second. */
const AUTH_LOG_PER_SECOND = 20;
let authLogSecond = 0;
let authLogged = 0;

function logAuthFailure(logger: Logger, err: LogsvcError, req: { method: string; path: string; remoteAddress?: string }): void {
  const second = Math.floor(Date.now() / 1000);
  if (second !== authLogSecond) {
    authLogSecond = second;
    authLogged = 0;
  }
  if (++authLogged > AUTH_LOG_PER_SECOND) return;
  logger.warn('authentication failed', { module: 'http', method: req.method, path: req.path.slice(0, 200), remote: req.remoteAddress ?? '', code: err.code, reason: err.message });
}

function errorReply(err: unknown, logger: Logger, req: { method: string; path: string; remoteAddress?: string }): Reply {
  if (isLogsvcError(err)) {
    if (err.code === 'E_AUTH_INVALID') logAuthFailure(logger, err, req);
    const headers: Record<string, string> = {};
    if (err.httpStatus === 401) headers['www-authenticate'] = 'Bearer';
    if (err.httpStatus === 503) headers['retry-after'] = '5';
    if (err.httpStatus === 429) headers['retry-after'] = '1';
    // Query errors keep their lines: the message, then a fenced block pointing into the query (as the product answers).
    return text(err.httpStatus, err.code === 'E_QUERY' ? err.message : err.message.replace(/\s*\n\s*/g, ' '), headers);
  }
  logger.error('request failed', { method: req.method, path: req.path, error: describeError(err) });
  return text(500, 'internal error; see the node log');
}

export async function startHttpServer(opts: HttpServerOptions, router: Router): Promise<HttpServer> {
  // uWS reads its header limit from the environment once, when the native module loads.
  process.env.UWS_HTTP_MAX_HEADERS_SIZE = String(opts.maxHeaderBytes);
  const uws = await import('uWebSockets.js');
  const app: TemplatedApp = uws.App();
  const { logger } = opts;

  // Ingest bodies of a declared length are read into reused shared slabs (src/lib/slab-pool.ts):
  // no new ArrayBuffer per request on this thread, and no copy on the way to a parsing worker.
  // Handlers do not keep the body past their reply (the record they store is new bytes).
  const bodySlabs = new SlabPool();
  // Bytes held by request bodies being read or handled, against opts.maxInflightBodyBytes.
  let bodyBytesHeld = 0;
  const run = async (res: HttpResponse, pending: Pending, route: Route, info: RequestInfo, body: Buffer, pooled = false, release = (): void => undefined): Promise<void> => {
    let reply: Reply;
    try {
      reply = await route.handle(info, body);
    } catch (err) {
      reply = errorReply(err, logger, info);
    } finally {
      if (pooled) bodySlabs.release(body);
      release();
    }
    write(res, pending, reply, false, info.method === 'HEAD');
  };

  /**
   * A route that reads its body as it arrives: chunks are pushed into a stream the handler reads.
   * The connection is not paused when the handler reads slower than the body arrives (uWS's
   * resume() re-arms its 10 s idle timeout, which then cut off answers that took longer after the
   * body's end); what waits unread is within the body's declared length, which the in-flight body
   * budget holds (http.max_inflight_body_bytes). A reply before the
   * body ended (a refusal) is sent once the rest of the body has been read and dropped (clients
   * send the whole body before they read an answer), within the route's limit: past it the answer
   * is 413 and the connection closed.
   */
  const readStreamed = (res: HttpResponse, pending: Pending, route: Route, handler: StreamedHandler, info: RequestInfo, limit: number, release: () => void): void => {
    let ended = false;
    /** The handler's reply, waiting for the end of the body. */
    let early: Reply | null = null;
    const body = new Readable({ highWaterMark: STREAM_BUFFER_BYTES, read: () => undefined });
    pending.onAbort = () => {
      if (!ended) body.destroy(new LogsvcError('E_BAD_REQUEST', 'the client closed the connection before the body ended'));
    };
    let size = 0;
    res.onData((chunk, isLast) => {
      if (pending.aborted || ended) return;
      size += chunk.byteLength;
      if (size > limit) {
        ended = true;
        body.destroy(new LogsvcError('E_BODY_TOO_LARGE', `request body is larger than the limit of ${limit} bytes`));
        if (early !== null) write(res, pending, text(413, `request body is larger than the limit of ${limit} bytes`), true);
        return;
      }
      if (isLast) ended = true;
      if (early !== null) {
        if (isLast) write(res, pending, early, false, info.method === 'HEAD');
        return;
      }
      if (body.destroyed) return;
      // uWS neuters the ArrayBuffer when this callback returns: copy it.
      body.push(Buffer.from(new Uint8Array(chunk)));
      if (isLast) body.push(null);
    });
    void (async () => {
      let reply: Reply;
      try {
        reply = await handler(info, body);
      } catch (err) {
        reply = errorReply(err, logger, info);
      } finally {
        release();
      }
      if (ended || pending.aborted) {
        write(res, pending, reply, false, info.method === 'HEAD');
        return;
      }
      // Answered before the body ended: the rest is read and dropped, then the answer sent.
      early = reply;
      body.destroy();
    })();
  };

  app.any('/*', (res, req) => {
    const pending: Pending = { aborted: false };
    inFlight++;
    res.onAborted(() => {
      if (!pending.aborted) inFlight--;
      pending.aborted = true;
      pending.onAbort?.();
    });
    const method = req.getCaseSensitiveMethod().toUpperCase();
    const rawPath = req.getUrl();
    const info: RequestInfo = { method, path: rawPath, query: new URLSearchParams(req.getQuery() ?? ''), headers: new Map(), params: {}, remoteAddress: Buffer.from(res.getRemoteAddressAsText()).toString() };
    let pattern = '(unmatched)';
    const onReply = opts.onReply;
    if (onReply !== undefined) {
      const t0 = performance.now();
      pending.observe = (status) => onReply(pattern, method, status, (performance.now() - t0) / 1000);
    }
    const headers = info.headers as Map<string, string>;
    req.forEach((k, v) => {
      const prev = headers.get(k);
      headers.set(k, prev === undefined ? v : `${prev}, ${v}`);
    });

    const head = method === 'HEAD';
    let match;
    try {
      // HEAD is answered by the GET route, without the body.
      match = router.match(head ? 'GET' : method, rawPath);
    } catch (err) {
      write(res, pending, errorReply(err, logger, info), false, head);
      return;
    }
    if (match === null) {
      write(res, pending, text(404, `no such endpoint: ${method} ${rawPath.slice(0, 200)}`), false, head);
      return;
    }
    if ('allowed' in match) {
      const allowed = match.allowed.includes('GET') ? [...match.allowed, 'HEAD'] : match.allowed;
      write(res, pending, text(405, `method ${method} is not allowed on ${rawPath.slice(0, 200)}; allowed: ${allowed.join(', ')}`, { allow: allowed.join(', ') }), false, head);
      return;
    }
    const { route, params } = match;
    info.params = params;
    pattern = route.pattern;
    try {
      info.path = decodeURIComponent(rawPath);
    } catch {
      // The router already refused malformed segments; keep the raw path for messages.
    }
    if (route.body === 'none') {
      void run(res, pending, route, info, Buffer.alloc(0));
      return;
    }
    const limit = route.body === 'ingest' ? opts.maxIngestBodyBytes : route.body === 'upload' ? opts.maxUploadBodyBytes : opts.maxApiBodyBytes;
    // Credentials from the headers before any byte of the body (src/http/pre-auth.ts): a stranger's
    // body is never buffered.
    if (router.beforeBody !== null) {
      let refusal: Reply | void;
      try {
        refusal = router.beforeBody(route, info);
      } catch (err) {
        refusal = errorReply(err, logger, info);
      }
      if (refusal !== undefined) {
        // The body is dropped, never held; the client reads the answer (answerRefusal).
        answerRefusal(res, pending, refusal, headers.get('content-length'), headers.get('connection'), limit);
        return;
      }
    }

    const tooLarge = (): void =>
      // Close the connection: the client may still be sending the rest of the body.
      write(res, pending, text(413, `request body is larger than the limit of ${limit} bytes`), true);
    const declared = headers.get('content-length');
    if (declared !== undefined && Number(declared) > limit) {
      tooLarge();
      return;
    }
    // The in-flight body budget: the declared length is held up front, a body without one as it grows.
    let held = 0;
    const release = (): void => {
      bodyBytesHeld -= held;
      held = 0;
    };
    const hold = (bytes: number): boolean => {
      if (bytes <= held) return true;
      if (bodyBytesHeld - held > 0 && bodyBytesHeld - held + bytes > opts.maxInflightBodyBytes) return false;
      bodyBytesHeld += bytes - held;
      held = bytes;
      return true;
    };
    const busy = (): void => {
      release();
      write(res, pending, text(503, `the node is receiving more request bodies than it may hold at once (http.max_inflight_body_bytes = ${opts.maxInflightBodyBytes}); retry later`, { 'retry-after': '1' }), true);
    };
    const declaredBytes = declared === undefined ? 0 : Number(declared);
    if (!hold(Number.isSafeInteger(declaredBytes) && declaredBytes > 0 ? declaredBytes : 0)) {
      busy();
      return;
    }
    // A client that leaves while its body is read gives the budget back; once the handler has the
    // body, the handler's end does (the bytes are held until then).
    let handed = false;
    pending.onAbort = () => {
      if (!handed) release();
    };
    if (route.streamed !== undefined) {
      handed = true;
      readStreamed(res, pending, route, route.streamed, info, limit, release);
      return;
    }
    const slab = route.body === 'ingest' && declared !== undefined ? bodySlabs.acquire(Number(declared)) : null;
    const chunks: Buffer[] = [];
    let size = 0;
    res.onData((chunk, isLast) => {
      if (pending.aborted) return;
      const at = size;
      size += chunk.byteLength;
      if (size > limit) {
        release();
        tooLarge();
        return;
      }
      if (!hold(size)) {
        busy();
        return;
      }
      if (slab !== null) {
        // uWS frames the body by its Content-Length, so it cannot outgrow the slab; checked anyway.
        if (size > slab.length) {
          release();
          write(res, pending, text(400, `request body is longer than its Content-Length of ${slab.length} bytes`), true);
          return;
        }
        slab.set(new Uint8Array(chunk), at);
        if (isLast) {
          handed = true;
          void run(res, pending, route, info, size === slab.length ? slab : slab.subarray(0, size), true, release);
        }
        return;
      }
      // uWS neuters the ArrayBuffer when this callback returns: copy it.
      chunks.push(Buffer.from(new Uint8Array(chunk)));
      if (isLast) {
        handed = true;
        void run(res, pending, route, info, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), false, release);
      }
    });
  });

  const listenSocket = await new Promise<us_listen_socket>((resolve, reject) => {
    app.listen(opts.host, opts.port, (sock) => {
      if (sock === false) reject(new LogsvcError('E_UNAVAILABLE', `cannot listen on ${opts.host}:${opts.port} (address in use or not available)`));
      else resolve(sock);
    });
  });
  const port = uws.us_socket_local_port(listenSocket as never);
  let closed = false;
  return {
    port,
    async drain(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    },
    close(force = false) {
      if (!closed) uws.us_listen_socket_close(listenSocket);
      closed = true;
      if (force) app.close();
    },
  };
}
