/**
 * Request/response and streamed responses over one peer connection. Requests carry a per-connection
 * id and an optional idempotency key; answers are a body or an error as plain data. A streamed
 * answer is chunks then an end, paced by credit the requester grants as its consumer takes chunks,
 * so neither side buffers more than a window. When the connection ends every pending request fails
 * at once with a retriable E_UNAVAILABLE; a request that waits longer than its timeout fails with
 * E_TIMEOUT and is cancelled on the responder.
 */
import { describeError, isErrorCode, isLogsvcError, LogsvcError } from '../../lib/errors.js';
import type { Cancel, Chunk, Credit, End, PeerMessage, Request, Response, WireError } from './messages.js';

export interface HandlerContext {
  /** The requesting node. */
  from: number;
  /** The caller's idempotency key, if it gave one. */
  key: string | undefined;
  /** Aborted when the requester cancels (timeout, stream left early) or the connection ends. */
  signal: AbortSignal;
}

export type UnaryHandler = (body: unknown, ctx: HandlerContext) => Promise<unknown> | unknown;
export type StreamHandler = (body: unknown, ctx: HandlerContext) => AsyncIterable<unknown>;

/** Handlers by request type, shared by every connection of a node. */
export class RpcHandlers {
  private readonly unary = new Map<string, UnaryHandler>();
  private readonly streams = new Map<string, StreamHandler>();

  handle(type: string, fn: UnaryHandler): void {
    if (this.unary.has(type) || this.streams.has(type)) throw new Error(`cluster request type "${type}" already has a handler`);
    this.unary.set(type, fn);
  }

  handleStream(type: string, fn: StreamHandler): void {
    if (this.unary.has(type) || this.streams.has(type)) throw new Error(`cluster request type "${type}" already has a handler`);
    this.streams.set(type, fn);
  }

  lookup(type: string): { unary: UnaryHandler } | { stream: StreamHandler } | null {
    const u = this.unary.get(type);
    if (u !== undefined) return { unary: u };
    const s = this.streams.get(type);
    return s !== undefined ? { stream: s } : null;
  }
}

export interface RequestOptions {
  timeoutMs?: number;
  /** Idempotency key handed to the handler (the same on every retry of one operation). */
  key?: string;
}

export interface StreamOptions extends RequestOptions {
  /** Chunks the responder may send ahead of the consumer (default 16). */
  window?: number;
}

export interface RpcLimits {
  defaultTimeoutMs: number;
  /** Requests this side serves at once on one connection; more are answered E_TOO_MANY_REQUESTS. */
  maxIncoming: number;
  /** Requests this side may have pending on one connection; more fail E_TOO_MANY_REQUESTS at once. */
  maxOutgoing: number;
  maxWindow: number;
}

export const DEFAULT_RPC_LIMITS: RpcLimits = { defaultTimeoutMs: 30_000, maxIncoming: 256, maxOutgoing: 1024, maxWindow: 256 };

/** A remote error as a local one: our own codes keep their meaning (HTTP status, retriable). */
export function fromWire(e: WireError, nodeId: number): LogsvcError {
  const code = isErrorCode(e.code) ? e.code : 'E_INTERNAL';
  return new LogsvcError(code, code === e.code ? e.message : `node ${nodeId}: ${e.code}: ${e.message}`);
}

export function toWire(err: unknown): WireError {
  if (isLogsvcError(err)) return { code: err.code, message: err.message, retriable: err.retriable };
  return { code: 'E_INTERNAL', message: describeError(err), retriable: false };
}

interface PendingUnary {
  kind: 'unary';
  resolve(v: unknown): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
}

interface Served {
  abort: AbortController;
  credit: number;
  /** Wakes a stream handler waiting for credit. */
  wake: (() => void) | null;
}

export class RpcChannel {
  private nextId = 1;
  private readonly pending = new Map<number, PendingUnary | StreamReader>();
  private readonly served = new Map<number, Served>();
  private failed: LogsvcError | null = null;

  constructor(
    readonly peerId: number,
    private readonly send: (msg: PeerMessage) => boolean,
    private readonly handlers: RpcHandlers,
    private readonly limits: RpcLimits = DEFAULT_RPC_LIMITS,
  ) {}

  get pendingCount(): number {
    return this.pending.size;
  }

  request(type: string, body: unknown, opts: RequestOptions = {}): Promise<unknown> {
    const refused = this.refuseNew();
    if (refused !== null) return Promise.reject(refused);
    const id = this.nextId++;
    const timeoutMs = opts.timeoutMs ?? this.limits.defaultTimeoutMs;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        this.send({ t: 'cancel', id } satisfies Cancel);
        reject(new LogsvcError('E_TIMEOUT', `cluster request "${type}" to node ${this.peerId} got no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { kind: 'unary', resolve, reject, timer });
      const req: Request = { t: 'req', id, type, body: body ?? null };
      if (opts.key !== undefined) req.key = opts.key;
      this.sendOrFail(id, req);
    });
  }

  /** A streamed request: iterate the chunks; leaving the loop early cancels it on the responder. */
  stream(type: string, body: unknown, opts: StreamOptions = {}): AsyncIterableIterator<unknown> {
    const window = Math.max(1, Math.min(opts.window ?? 16, this.limits.maxWindow));
    const id = this.nextId++;
    const reader = new StreamReader(id, type, this.peerId, window, opts.timeoutMs ?? this.limits.defaultTimeoutMs, (msg) => this.send(msg), () => this.pending.delete(id));
    const refused = this.refuseNew();
    if (refused !== null) {
      reader.fail(refused);
      return reader;
    }
    this.pending.set(id, reader);
    const req: Request = { t: 'req', id, type, body: body ?? null, window };
    if (opts.key !== undefined) req.key = opts.key;
    this.sendOrFail(id, req);
    return reader;
  }

  /** Routes one RPC message from the peer. */
  onMessage(msg: Request | Response | Chunk | End | Credit | Cancel): void {
    switch (msg.t) {
      case 'req':
        this.serve(msg);
        return;
      case 'res': {
        const p = this.pending.get(msg.id);
        if (p === undefined || p instanceof StreamReader) return; // late answer to a timed-out request
        this.pending.delete(msg.id);
        clearTimeout(p.timer);
        if (msg.error !== undefined) p.reject(fromWire(msg.error, this.peerId));
        else p.resolve(msg.body);
        return;
      }
      case 'chunk':
      case 'end': {
        const p = this.pending.get(msg.id);
        if (p instanceof StreamReader) p.onMessage(msg);
        return;
      }
      case 'credit': {
        const s = this.served.get(msg.id);
        if (s === undefined) return;
        s.credit = Math.min(s.credit + msg.n, this.limits.maxWindow);
        s.wake?.();
        return;
      }
      case 'cancel': {
        const s = this.served.get(msg.id);
        if (s === undefined) return;
        this.served.delete(msg.id);
        s.abort.abort(new LogsvcError('E_UNAVAILABLE', 'cancelled by the requester'));
        s.wake?.();
        return;
      }
    }
  }

  /** The connection ended: every pending request fails now, every served one is aborted. */
  close(reason: string): void {
    if (this.failed !== null) return;
    this.failed = new LogsvcError('E_UNAVAILABLE', `connection to node ${this.peerId} ended (${reason})`);
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      if (p instanceof StreamReader) p.fail(this.failed);
      else {
        clearTimeout(p.timer);
        p.reject(this.failed);
      }
    }
    for (const [id, s] of this.served) {
      this.served.delete(id);
      s.abort.abort(this.failed);
      s.wake?.();
    }
  }

  private refuseNew(): LogsvcError | null {
    if (this.failed !== null) return this.failed;
    if (this.pending.size >= this.limits.maxOutgoing) {
      return new LogsvcError('E_TOO_MANY_REQUESTS', `${this.pending.size} cluster requests already pending to node ${this.peerId}`);
    }
    return null;
  }

  private sendOrFail(id: number, msg: Request): void {
    let err: LogsvcError | null = null;
    try {
      if (!this.send(msg)) err = new LogsvcError('E_UNAVAILABLE', `connection to node ${this.peerId} is closed`);
    } catch (e) {
      err = isLogsvcError(e) ? e : new LogsvcError('E_INTERNAL', describeError(e));
    }
    if (err === null) return;
    const p = this.pending.get(id);
    this.pending.delete(id);
    if (p instanceof StreamReader) p.fail(err);
    else if (p !== undefined) {
      clearTimeout(p.timer);
      p.reject(err);
    }
  }

  private serve(req: Request): void {
    const found = this.handlers.lookup(req.type);
    const streamed = req.window !== undefined;
    const answerError = (err: LogsvcError): void => {
      this.send(streamed ? ({ t: 'end', id: req.id, error: toWire(err) } satisfies End) : ({ t: 'res', id: req.id, error: toWire(err) } satisfies Response));
    };
    if (found === null || streamed !== ('stream' in found)) {
      answerError(new LogsvcError('E_NOT_FOUND', `no ${streamed ? 'streamed ' : ''}cluster request type "${req.type}" on this node`));
      return;
    }
    if (this.served.size >= this.limits.maxIncoming || this.served.has(req.id)) {
      answerError(new LogsvcError('E_TOO_MANY_REQUESTS', `node is already serving ${this.served.size} cluster requests on this connection`));
      return;
    }
    const s: Served = { abort: new AbortController(), credit: Math.min(req.window ?? 0, this.limits.maxWindow), wake: null };
    this.served.set(req.id, s);
    const ctx: HandlerContext = { from: this.peerId, key: req.key, signal: s.abort.signal };
    // True once, for whoever finishes the request first: the handler, or a cancel / the end of the connection.
    const done = (): boolean => {
      if (this.served.get(req.id) !== s) return false;
      this.served.delete(req.id);
      return true;
    };
    if ('unary' in found) {
      void (async () => {
        let answer: Response;
        try {
          answer = { t: 'res', id: req.id, body: (await found.unary(req.body, ctx)) ?? null };
        } catch (err) {
          answer = { t: 'res', id: req.id, error: toWire(err) };
        }
        if (!done()) return; // cancelled or the connection ended: nobody is waiting
        this.sendAnswer(answer);
      })();
      return;
    }
    void this.pump(req, () => found.stream(req.body, ctx), s, done);
  }

  /** Sends an answer; one too big for a frame becomes an error answer instead. */
  private sendAnswer(msg: Response | End | Chunk): boolean {
    try {
      return this.send(msg);
    } catch (err) {
      const error = toWire(err);
      return this.send(msg.t === 'res' ? { t: 'res', id: msg.id, error } : { t: 'end', id: msg.id, error });
    }
  }

  private async pump(req: Request, open: () => AsyncIterable<unknown>, s: Served, done: () => boolean): Promise<void> {
    let it: AsyncIterator<unknown> | null = null;
    let error: WireError | undefined;
    /** The handler ran to its end (or threw): nothing of it is left to close. */
    let finished = false;
    try {
      it = open()[Symbol.asyncIterator]();
      for (;;) {
        while (s.credit <= 0 && !s.abort.signal.aborted) await new Promise<void>((r) => (s.wake = r));
        s.wake = null;
        if (s.abort.signal.aborted) break;
        const step = await it.next();
        if (step.done === true) finished = true;
        if (step.done === true || s.abort.signal.aborted) break;
        s.credit--;
        const chunk: Chunk = { t: 'chunk', id: req.id, body: step.value ?? null };
        let sent: boolean;
        try {
          sent = this.send(chunk);
        } catch (err) {
          error = toWire(err);
          break;
        }
        if (!sent) break;
      }
    } catch (err) {
      finished = true; // the handler threw: it ended
      error = toWire(err);
    } finally {
      // Stopped before the handler's end (cancelled, the connection ended, or a chunk could not be
      // sent, seen before the connection's close): close the handler so its own cleanup runs (a
      // segment.read gives back its send slot and file handle; left suspended it would keep them).
      if (!finished) await Promise.resolve(it?.return?.()).catch(() => undefined);
    }
    if (!done()) return;
    this.send(error === undefined ? ({ t: 'end', id: req.id } satisfies End) : ({ t: 'end', id: req.id, error } satisfies End));
  }
}

/** The requester's side of a streamed request: a bounded queue of chunks and the credit it grants. */
class StreamReader implements AsyncIterableIterator<unknown> {
  private readonly queue: unknown[] = [];
  private ended = false;
  private error: Error | null = null;
  private waiter: { resolve(r: IteratorResult<unknown>): void; reject(e: Error): void } | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Chunks the responder may still send without more credit. */
  private outstanding: number;
  private consumed = 0;

  constructor(
    private readonly id: number,
    private readonly type: string,
    private readonly peerId: number,
    private readonly window: number,
    private readonly timeoutMs: number,
    private readonly send: (msg: PeerMessage) => boolean,
    private readonly forget: () => void,
  ) {
    this.outstanding = window;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<unknown> {
    return this;
  }

  onMessage(msg: Chunk | End): void {
    if (this.ended) return;
    if (msg.t === 'chunk') {
      if (this.outstanding <= 0) {
        this.cancel(new LogsvcError('E_PROTOCOL', `node ${this.peerId} sent more chunks of "${this.type}" than the credit allowed`));
        return;
      }
      this.outstanding--;
      this.queue.push(msg.body);
    } else {
      this.ended = true;
      this.forget();
      if (msg.error !== undefined) this.error = fromWire(msg.error, this.peerId);
    }
    this.deliver();
  }

  fail(err: Error): void {
    if (this.ended) return;
    this.ended = true;
    this.error = err;
    this.queue.length = 0;
    this.deliver();
  }

  next(): Promise<IteratorResult<unknown>> {
    if (this.waiter !== null) return Promise.reject(new Error('stream read while a read is pending'));
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
      this.deliver();
      if (this.waiter !== null) {
        this.timer = setTimeout(() => this.cancel(new LogsvcError('E_TIMEOUT', `cluster stream "${this.type}" from node ${this.peerId} sent nothing for ${this.timeoutMs} ms`)), this.timeoutMs);
      }
    });
  }

  return(): Promise<IteratorResult<unknown>> {
    if (!this.ended) this.cancel(null);
    return Promise.resolve({ done: true, value: undefined });
  }

  private cancel(err: Error | null): void {
    if (this.ended) return;
    this.send({ t: 'cancel', id: this.id } satisfies Cancel);
    this.forget();
    this.ended = true;
    this.error = err;
    this.queue.length = 0;
    this.deliver();
  }

  private deliver(): void {
    const w = this.waiter;
    if (w === null) return;
    if (this.queue.length > 0) {
      this.settle();
      const value = this.queue.shift();
      if (!this.ended && ++this.consumed >= Math.ceil(this.window / 2)) {
        this.outstanding += this.consumed;
        this.send({ t: 'credit', id: this.id, n: this.consumed } satisfies Credit);
        this.consumed = 0;
      }
      w.resolve({ done: false, value });
    } else if (this.ended) {
      this.settle();
      if (this.error !== null) {
        const e = this.error;
        this.error = null; // report once; later reads see the end
        w.reject(e);
      } else w.resolve({ done: true, value: undefined });
    }
  }

  private settle(): void {
    this.waiter = null;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
