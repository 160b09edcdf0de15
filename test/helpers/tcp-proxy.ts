/**
 * A TCP proxy a test controls, between a port it listens on (127.0.0.1, port 0) and a target.
 * Modes: forward (default); `delay(ms)` holds every chunk that long (order kept); `drop()` silently
 * discards every byte both ways while connections stay open (a black hole, like a partition TCP
 * cannot see); `cut()` ends every connection now and refuses new ones; `heal()` forwards again
 * (connections that lost bytes to `drop()` are ended, since their byte streams are torn). Bytes
 * forwarded are counted per direction. `close()` in teardown stops everything.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

type Mode = 'forward' | 'drop' | 'cut';

interface Pair {
  client: Socket;
  upstream: Socket;
  /** Bytes were discarded on this pair, so its streams are torn. */
  torn: boolean;
}

export class TcpProxy {
  /** Bytes forwarded client -> target and target -> client. */
  readonly bytes = { up: 0, down: 0 };
  /** Connections accepted so far. */
  accepted = 0;
  private mode: Mode = 'forward';
  private delayMs = 0;
  private readonly pairs = new Set<Pair>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private target: { host: string; port: number },
  ) {}

  static async start(target: { host?: string; port: number }): Promise<TcpProxy> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const addr = server.address();
    if (typeof addr !== 'object' || addr === null) throw new Error('proxy has no address');
    const proxy = new TcpProxy(server, addr.port, { host: target.host ?? '127.0.0.1', port: target.port });
    server.on('connection', (s) => proxy.accept(s));
    return proxy;
  }

  get addr(): string {
    return `127.0.0.1:${this.port}`;
  }

  get connections(): number {
    return this.pairs.size;
  }

  /** Points new connections at another target (e.g. a restarted process on a new port). */
  retarget(target: { host?: string; port: number }): void {
    this.target = { host: target.host ?? '127.0.0.1', port: target.port };
  }

  delay(ms: number): void {
    this.delayMs = Math.max(0, ms);
  }

  drop(): void {
    this.mode = 'drop';
  }

  cut(): void {
    this.mode = 'cut';
    for (const p of this.pairs) this.end(p);
  }

  heal(): void {
    this.mode = 'forward';
    this.delayMs = 0;
    for (const p of this.pairs) if (p.torn) this.end(p);
  }

  async close(): Promise<void> {
    this.mode = 'cut';
    for (const p of this.pairs) this.end(p);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    this.accepted++;
    if (this.mode === 'cut') {
      client.destroy();
      return;
    }
    const upstream = connect(this.target);
    const pair: Pair = { client, upstream, torn: false };
    this.pairs.add(pair);
    const pipe = (from: Socket, to: Socket, dir: 'up' | 'down'): void => {
      // When each direction's previous chunk is due, so a changed delay never reorders bytes.
      let lastDue = 0;
      from.on('data', (chunk: Buffer) => {
        if (this.mode !== 'forward') {
          pair.torn = true;
          return;
        }
        const send = (): void => {
          if (to.destroyed) return;
          this.bytes[dir] += chunk.length;
          to.write(chunk);
        };
        const now = Date.now();
        const due = Math.max(lastDue, now + this.delayMs);
        lastDue = due;
        if (due > now) setTimeout(send, due - now);
        else send();
      });
      from.on('error', () => this.end(pair));
      from.on('close', () => this.end(pair));
    };
    pipe(client, upstream, 'up');
    pipe(upstream, client, 'down');
  }

  private end(p: Pair): void {
    this.pairs.delete(p);
    p.client.destroy();
    p.upstream.destroy();
  }
}
