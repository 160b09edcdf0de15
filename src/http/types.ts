/** The HTTP vocabulary shared by the server, the router and the handlers (no uWebSockets.js types). */
import type { Readable } from 'node:stream';

export interface RequestInfo {
  /** Upper-case method. */
  method: string;
  /** Decoded path without the query string. */
  path: string;
  query: URLSearchParams;
  /** Lower-case header names. */
  headers: ReadonlyMap<string, string>;
  params: Readonly<Record<string, string>>;
  /** The peer's IP address as text (set by the server; absent in requests built by tests). */
  remoteAddress?: string;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /**
   * A streamed (chunked) body instead of `body`: called once the status and headers are written.
   * The stream stays open until `end()` or the client leaves (`onClose`).
   */
  stream?: (out: ResponseStream) => void;
}

/** The body of a streamed reply. Writes after the client left are dropped. */
export interface ResponseStream {
  /**
   * Sends a chunk. False when the client is slower than the producer and the chunk waits in the
   * server's buffer: a producer of many chunks awaits `writable()` before writing more.
   */
  write(chunk: string): boolean;
  /** Resolves once what waited in the buffer has gone to the client (or the client left). */
  writable(): Promise<void>;
  end(): void;
  /** Ends the reply by closing the connection: the client sees a cut body, never a complete one. */
  abort(): void;
  /** Called once when the client goes away before `end()`. */
  onClose(listener: () => void): void;
  readonly closed: boolean;
}

/** Which body limit applies: none (body ignored), api (management requests), ingest (large) or upload (lookup files). */
export type BodyKind = 'none' | 'api' | 'ingest' | 'upload';

export type Handler = (req: RequestInfo, body: Buffer) => Promise<Reply> | Reply;

/**
 * A handler that reads the body as it arrives (a route's `streamed`): called once the checks before
 * the body passed, with the body as a byte stream. A reply sent before the body ended closes the connection. The stream errors with
 * E_BODY_TOO_LARGE past the route's body limit, and when the client leaves.
 */
export type StreamedHandler = (req: RequestInfo, body: Readable) => Promise<Reply>;

/**
 * The credentials a route with a body needs, checked from the headers before any byte of the body
 * is read (issue 24): a request without them is answered 401/403 at once and its connection closed.
 * 'api': a valid API token (the default for api and upload bodies); 'any': a valid API or ingest
 * token (the default for ingest bodies; the handler then checks which it needs); 'public': none; a
 * function: a route's own check (a token in the path), which throws a LogsvcError or returns the
 * refusal to send. The handler still authorizes as before: this only keeps strangers' bodies out.
 */
export type PreAuth = 'api' | 'any' | 'public' | ((req: RequestInfo) => Reply | void);

export interface Route {
  method: string;
  /** Path pattern: literal segments and `:name` parameters, e.g. `/api/v1/repositories/:repo/ingest`. */
  pattern: string;
  body: BodyKind;
  handle: Handler;
  /** Set: the server hands the body to this as it arrives, instead of to `handle` once read whole. */
  streamed?: StreamedHandler;
  /** Checked before the body is read; see PreAuth. Only for routes with a body. */
  preAuth?: PreAuth;
}

/** The server's check before it reads a body (set on the Router by buildRouter). */
export type BeforeBody = (route: Route, req: RequestInfo) => Reply | void;

export const text = (status: number, body: string, headers: Record<string, string> = {}): Reply => ({
  status,
  headers: { 'content-type': 'text/plain; charset=utf-8', ...headers },
  body: body.endsWith('\n') ? body : `${body}\n`,
});

export const json = (status: number, value: unknown, headers: Record<string, string> = {}): Reply => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  body: JSON.stringify(value),
});
