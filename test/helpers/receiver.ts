/**
 * A real HTTP receiver for tests of outbound calls (alert actions): listens on a loopback address
 * and port 0, records every request (method, path, headers, body, arrival time) and answers with
 * the status the test chose for that path (a fixed status, or a sequence, then 200). Closed in the
 * test's teardown; every wait is bounded.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import type { Teardown } from './node-process.js';

export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Answer {
  status: number;
  /** Answer only after this long (a slow receiver). */
  delayMs?: number;
  headers?: Record<string, string>;
  body?: string;
}

export interface Receiver {
  /** Base URL without a trailing slash, e.g. http://127.0.0.1:40123 */
  url: string;
  port: number;
  requests: Received[];
  /** Requests to `path` (exact match, query string excluded). */
  to(path: string): Received[];
  /** Answers for `path`, used in order; after the last one, 200. */
  answer(path: string, ...answers: Answer[]): void;
  /** Waits until at least `n` requests reached `path`; returns them. Throws after `timeoutMs`. */
  waitFor(path: string, n: number, timeoutMs?: number): Promise<Received[]>;
  /**
   * Waits until no request has reached any of `paths` for `quietMs` (at most `timeoutMs`): what a
   * node had under way when it was told to stop sending (late on a busy machine) has landed.
   */
  quiet(paths: string[], quietMs: number, timeoutMs?: number): Promise<void>;
}

export async function startReceiver(t: Teardown, host = '127.0.0.1'): Promise<Receiver> {
  const requests: Received[] = [];
  const answers = new Map<string, Answer[]>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!;
      requests.push({ method: req.method ?? '', path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const queue = answers.get(path);
      const a = queue !== undefined && queue.length > 0 ? queue.shift()! : { status: 200, body: 'ok' };
      const send = (): void => {
        if (res.destroyed) return;
        res.writeHead(a.status, a.headers ?? { 'content-type': 'text/plain' });
        res.end(a.body ?? '');
      };
      if (a.delayMs === undefined) send();
      else setTimeout(send, a.delayMs).unref();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  }));
  const port = (server.address() as AddressInfo).port;
  const to = (path: string): Received[] => requests.filter((r) => r.path === path);
  return {
    url: `http://${host}:${port}`,
    port,
    requests,
    to,
    answer(path, ...a) {
      answers.set(path, [...a]);
    },
    async waitFor(path, n, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (to(path).length < n) {
        if (Date.now() > deadline) throw new Error(`receiver: ${to(path).length} of ${n} requests to ${path} within ${timeoutMs} ms (all: ${requests.map((r) => r.path).join(', ')})`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return to(path);
    },
    async quiet(paths, quietMs, timeoutMs = 20_000) {
      const count = (): number => paths.reduce((n, p) => n + to(p).length, 0);
      const deadline = Date.now() + timeoutMs;
      let seen = count();
      let since = Date.now();
      while (Date.now() - since < quietMs && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        if (count() !== seen) [seen, since] = [count(), Date.now()];
      }
    },
  };
}

export interface Blackhole {
  url: string;
  /** Connections accepted so far. */
  connections(): number;
}

/** A TCP server that accepts connections, reads what is sent and never answers (a hung webhook). */
export async function startBlackhole(t: Teardown, host = '127.0.0.1'): Promise<Blackhole> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createNetServer((s) => {
    accepted++;
    sockets.add(s);
    s.on('data', () => undefined);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  t.teardown(() => new Promise<void>((resolve) => {
    for (const s of sockets) s.destroy();
    server.close(() => resolve());
  }));
  return { url: `http://${host}:${(server.address() as AddressInfo).port}`, connections: () => accepted };
}
