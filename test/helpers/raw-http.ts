/**
 * HTTP/1.1 over a raw socket, for tests that need what fetch hides: a keep-alive connection opened
 * before an event (a node's stop) and used after it, or a request whose body is sent in parts.
 */
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Map<string, string>;
  body: string;
}

/** One keep-alive connection that sends requests one at a time and reads each whole answer. */
export class RawConnection {
  private buf = Buffer.alloc(0);
  private waiter: (() => void) | null = null;
  private closed = false;
  readonly socket: Socket;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.waiter?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.waiter?.();
    });
    socket.on('error', () => undefined);
  }

  static open(url: string): Promise<RawConnection> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const s = connect(Number(port), hostname, () => resolve(new RawConnection(s)));
      s.once('error', reject);
    });
  }

  /** Writes a request's head and the first `sentBytes` of its body (all of it by default). */
  send(method: string, path: string, headers: Record<string, string>, body: Buffer | string = '', sentBytes?: number): void {
    const b = Buffer.from(body);
    const head = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', `Content-Length: ${b.length}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', ''].join('\r\n');
    this.socket.write(head);
    this.socket.write(b.subarray(0, sentBytes ?? b.length));
  }

  /** Writes more body bytes (after send with fewer than all). */
  write(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** The next whole answer (Content-Length bodies), or an error naming what was had when the connection closed or `timeoutMs` passed. */
  async read(timeoutMs = 30_000): Promise<RawResponse> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end >= 0) {
        const lines = this.buf.subarray(0, end).toString('latin1').split('\r\n');
        const headers = new Map<string, string>();
        for (const l of lines.slice(1)) {
          const i = l.indexOf(':');
          headers.set(l.slice(0, i).trim().toLowerCase(), l.slice(i + 1).trim());
        }
        const length = Number(headers.get('content-length') ?? 0);
        if (this.buf.length >= end + 4 + length) {
          const body = this.buf.subarray(end + 4, end + 4 + length).toString('utf8');
          this.buf = this.buf.subarray(end + 4 + length);
          return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0]!)?.[1] ?? 0), headers, body };
        }
      }
      if (this.closed) throw new Error(`connection closed before a whole answer (${this.buf.length} bytes: ${this.buf.toString('latin1').slice(0, 200)})`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no whole answer within ${timeoutMs} ms (${this.buf.length} bytes so far)`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(timer);
          this.waiter = null;
          resolve();
        };
      });
    }
  }

  async request(method: string, path: string, headers: Record<string, string>, body: Buffer | string = ''): Promise<RawResponse> {
    this.send(method, path, headers, body);
    return this.read();
  }

  close(): void {
    this.socket.destroy();
  }
}
