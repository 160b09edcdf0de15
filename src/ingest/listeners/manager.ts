/**
 * Runs the ingest listeners this node should run (every definition in global state, or those whose
 * vHost is this node), following global state: a listener is opened, re-opened or closed as its
 * events apply, with no restart, and all are opened again at start.
 *
 * What each transport guarantees (docs/ingest-doors.md):
 * - TCP: messages are gathered into a batch (at most `batch_linger_ms`); a connection that handed
 *   messages to a batch is paused (no more reads, so TCP flow control holds the sender back) until
 *   that batch is durable in the digest queue. A batch refused for a retriable reason (ingest
 *   paused, disk full) is retried with the connections still paused; nothing read is dropped
 *   unless the batch is refused for good (its repository deleted), which is logged. What the
 *   sender wrote after the last durable batch may be lost if the node dies: TCP acknowledges
 *   bytes into the kernel's buffer, not into the queue, and there is no answer in the protocol.
 * - UDP: a datagram is one message. Datagrams arriving while a batch is being made durable are held
 *   up to `udp_max_pending_bytes`; beyond it, and when the kernel's buffer overflows, they are
 *   dropped (counted in the log). Nothing acknowledges a datagram.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import type { Logger } from '../../lib/logger.js';
import { isLogsvcError } from '../../lib/errors.js';
import type { GlobalStore, IngestListenerDef } from '../../global/index.js';
import { ingestBody, type IngestRunDeps } from '../ingest-request.js';
import { encodeFrames } from '../doors/lines.js';
import { FramingError, TcpFramer } from './framing.js';

export interface ListenerLimits {
  maxConnections: number;
  maxMessageBytes: number;
  udpMaxPendingBytes: number;
  batchLingerMs: number;
}

/** Messages per batch and bytes per batch: a batch is committed at once when it reaches either. */
const BATCH_MESSAGES = 5_000;
const BATCH_BYTES = 4 * 1024 * 1024;
const RETRY_MS = [100, 250, 500, 1000, 2000, 5000];

/** One running listener: its socket(s) and the batch being gathered. */
class Running {
  readonly key: string;
  private server: Server | null = null;
  private udp: UdpSocket | null = null;
  private readonly sockets = new Set<Socket>();
  private batch: Buffer[] = [];
  private batchBytes = 0;
  /** Connections paused until the batch being gathered (or committed) is durable. */
  private waiting = new Set<Socket>();
  private timer: NodeJS.Timeout | null = null;
  private committing: Promise<void> | null = null;
  private closed = false;
  private dropped = 0;
  private truncated = 0;
  private lastReport = 0;
  /** The port actually bound (tests, logs). */
  port = 0;

  constructor(
    public def: IngestListenerDef,
    private readonly owner: ListenerManager,
  ) {
    this.key = JSON.stringify([def.protocol, def.bindInterface, def.port, def.repositoryId, def.parser, def.charset]);
  }

  async open(): Promise<void> {
    const host = this.def.bindInterface === '' ? '0.0.0.0' : this.def.bindInterface;
    if (this.def.protocol === 'TCP') {
      const server = createServer((sock) => this.accept(sock));
      server.maxConnections = this.owner.limits.maxConnections;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host, port: this.def.port }, () => {
          server.off('error', reject);
          resolve();
        });
      });
      server.on('error', (err) => this.owner.logger.warn('ingest listener socket error', { listener: this.def.name, error: err.message }));
      this.server = server;
      this.port = (server.address() as { port: number }).port;
    } else {
      const udp = createSocket({ type: host.includes(':') ? 'udp6' : 'udp4' });
      await new Promise<void>((resolve, reject) => {
        udp.once('error', reject);
        udp.bind({ address: host, port: this.def.port }, () => {
          udp.off('error', reject);
          resolve();
        });
      });
      udp.on('error', (err) => this.owner.logger.warn('ingest listener socket error', { listener: this.def.name, error: err.message }));
      udp.on('message', (msg) => this.datagram(msg));
      this.udp = udp;
      this.port = udp.address().port;
    }
  }

  private accept(sock: Socket): void {
    if (this.closed) {
      sock.destroy();
      return;
    }
    this.sockets.add(sock);
    const framer = new TcpFramer(this.owner.limits.maxMessageBytes);
    sock.on('data', (chunk: Buffer) => {
      let msgs: Buffer[];
      try {
        msgs = framer.push(chunk);
      } catch (err) {
        if (!(err instanceof FramingError)) throw err;
        this.owner.logger.warn('ingest listener closed a connection: bad framing', { listener: this.def.name, remote: sock.remoteAddress, error: err.message });
        sock.destroy();
        return;
      }
      this.truncated += framer.truncated;
      framer.truncated = 0;
      if (msgs.length === 0) return;
      // Nothing more is read from this connection until these messages are durable.
      sock.pause();
      this.waiting.add(sock);
      for (const m of msgs) this.add(m);
    });
    sock.on('end', () => {
      const rest = framer.end();
      for (const m of rest) this.add(m);
      sock.end();
    });
    sock.on('error', () => sock.destroy());
    sock.on('close', () => {
      this.sockets.delete(sock);
      this.waiting.delete(sock);
    });
  }

  private datagram(msg: Buffer): void {
    if (this.batchBytes + msg.length > this.owner.limits.udpMaxPendingBytes) {
      this.dropped++;
      this.report();
      return;
    }
    let end = msg.length;
    while (end > 0 && (msg[end - 1] === 0x0a || msg[end - 1] === 0x0d || msg[end - 1] === 0x00)) end--;
    if (end === 0) return;
    if (end > this.owner.limits.maxMessageBytes) {
      end = this.owner.limits.maxMessageBytes;
      this.truncated++;
    }
    this.add(msg.subarray(0, end));
  }

  private add(m: Buffer): void {
    this.batch.push(m);
    this.batchBytes += m.length + 4;
    if (this.committing !== null) return;
    if (this.batch.length >= BATCH_MESSAGES || this.batchBytes >= BATCH_BYTES) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.owner.limits.batchLingerMs);
  }

  /** Commits the gathered batch; the connections that fed it resume once it is durable. */
  private flush(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.committing !== null || this.batch.length === 0) return;
    const batch = this.batch;
    const waiting = this.waiting;
    this.batch = [];
    this.batchBytes = 0;
    this.waiting = new Set();
    this.committing = this.commit(batch).finally(() => {
      this.committing = null;
      for (const s of waiting) if (!s.destroyed) s.resume();
      if (this.batch.length > 0) this.flush();
    });
  }

  private async commit(batch: Buffer[]): Promise<void> {
    const body = this.decode(batch);
    for (let attempt = 0; ; attempt++) {
      const repo = this.owner.store.state.repositories.get(this.def.repositoryId);
      if (repo === undefined) {
        this.owner.logger.warn('ingest listener dropped messages: its repository no longer exists', { listener: this.def.name, messages: batch.length });
        return;
      }
      try {
        await ingestBody(this.owner.deps, { repo, parser: this.def.parser }, 'door', body, undefined, { params: { door: 'lines' }, anyParser: false });
        this.report();
        return;
      } catch (err) {
        const retriable = isLogsvcError(err) && err.retriable;
        if (!retriable || this.closed) {
          this.owner.logger.warn('ingest listener dropped messages', { listener: this.def.name, messages: batch.length, error: (err as Error).message });
          return;
        }
        await new Promise((r) => setTimeout(r, RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]));
      }
    }
  }

  /** Frames as UTF-8: bytes as they are for UTF-8 listeners, decoded from the listener's charset otherwise. */
  private decode(batch: Buffer[]): Buffer {
    if (this.def.charset === 'utf-8') return encodeFrames(batch);
    const dec = new TextDecoder(this.def.charset);
    return encodeFrames(batch.map((b) => Buffer.from(dec.decode(b), 'utf8')));
  }

  private report(): void {
    if (this.dropped === 0 && this.truncated === 0) return;
    const now = Date.now();
    if (now - this.lastReport < 10_000) return;
    this.lastReport = now;
    this.owner.logger.warn('ingest listener dropped or cut messages', { listener: this.def.name, droppedDatagrams: this.dropped, truncatedMessages: this.truncated });
    this.dropped = 0;
    this.truncated = 0;
  }

  /** Stops accepting, closes every connection, and waits (bounded) for the batch in flight. */
  async close(): Promise<void> {
    this.closed = true;
    this.flush();
    this.server?.close();
    this.udp?.close();
    for (const s of this.sockets) s.destroy();
    if (this.committing !== null) await Promise.race([this.committing, new Promise((r) => setTimeout(r, 5000))]);
  }
}

export class ListenerManager {
  private readonly running = new Map<string, Running>();
  /** Listener id -> why it could not be opened (address in use, ...). */
  readonly problems = new Map<string, string>();
  private sync: Promise<void> = Promise.resolve();
  private stopped = false;
  /** Listeners that could not be opened are tried again this often. */
  private retry: NodeJS.Timeout | null = null;

  constructor(
    readonly store: GlobalStore,
    readonly deps: IngestRunDeps,
    readonly limits: ListenerLimits,
    readonly logger: Logger,
    private readonly selfId: number,
  ) {}

  /** Opens what global state asks for, and follows its listener events from now on. */
  async start(): Promise<void> {
    this.store.onApplied((e) => {
      if (e.type === 'IngestListenerSaved' || e.type === 'IngestListenerDeleted' || e.type === 'RepositoryDeleted') void this.reconcile();
    });
    await this.reconcile();
    this.retry = setInterval(() => {
      if (this.problems.size > 0) void this.reconcile();
    }, 30_000);
    this.retry.unref();
  }

  /** The port a running listener is bound to (undefined when it is not running here). */
  portOf(id: string): number | undefined {
    return this.running.get(id)?.port;
  }

  /** Brings the running sockets in line with global state; one reconcile at a time. */
  reconcile(): Promise<void> {
    this.sync = this.sync.then(() => this.apply()).catch((err: unknown) => this.logger.error('ingest listeners: reconcile failed', { error: (err as Error).message }));
    return this.sync;
  }

  private async apply(): Promise<void> {
    if (this.stopped) return;
    const wanted = new Map<string, IngestListenerDef>();
    for (const l of this.store.state.listeners.all()) if (l.vHost === null || l.vHost === this.selfId) wanted.set(l.id, l);
    for (const [id, r] of this.running) {
      const w = wanted.get(id);
      if (w === undefined || new Running(w, this).key !== r.key) {
        this.running.delete(id);
        await r.close();
        this.logger.info('ingest listener stopped', { listener: r.def.name, protocol: r.def.protocol, port: r.port });
      }
    }
    for (const id of this.problems.keys()) if (!wanted.has(id)) this.problems.delete(id);
    for (const [id, def] of wanted) {
      const have = this.running.get(id);
      if (have !== undefined) {
        // Same socket; a new name is taken as it is.
        have.def = def;
        continue;
      }
      const r = new Running(def, this);
      try {
        await r.open();
        this.running.set(id, r);
        this.problems.delete(id);
        this.logger.info('ingest listener started', { listener: def.name, protocol: def.protocol, bind: def.bindInterface === '' ? '0.0.0.0' : def.bindInterface, port: r.port });
      } catch (err) {
        const why = (err as Error).message;
        this.problems.set(id, why);
        this.logger.warn('ingest listener could not be opened', { listener: def.name, protocol: def.protocol, port: def.port, error: why });
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry !== null) clearInterval(this.retry);
    await this.sync;
    await Promise.all([...this.running.values()].map((r) => r.close()));
    this.running.clear();
  }
}
