/**
 * Live streams at their start boundary, for tests: a steady ingest load whose every acknowledged
 * id is remembered with its acknowledgement time, and a check of one live stream against it: no id
 * twice, and every id acknowledged before shortly after the stream was asked for is in it (its
 * historical part or its live part) unless the answer says it is partial. Every wait is bounded.
 */
import { api } from './http.js';
import { openNdjsonStream, sleep } from './query.js';

export interface LiveLoad {
  /** id -> epoch ms of the acknowledgement. */
  readonly acked: Map<string, number>;
  stop(): Promise<void>;
}

/**
 * `clients` loops each sending 5 events per request (field uid, timestamp now) to the nodes in
 * turn, a request every ~20 ms. Refused requests (a node stopping) are not remembered. With
 * `aheadMs`, the last client stamps its events that far ahead of this clock (a sender whose clock
 * runs ahead).
 */
export function startLiveLoad(nodes: () => { url: string }[], ingestToken: string, opts: { clients?: number; aheadMs?: number } = {}): LiveLoad {
  const clients = opts.clients ?? 2;
  const acked = new Map<string, number>();
  let seq = 0;
  let stopped = false;
  const client = async (k: number): Promise<void> => {
    while (!stopped) {
      const ids = Array.from({ length: 5 }, () => `e${++seq}`);
      const body = JSON.stringify([{ tags: { client: String(k) }, events: ids.map((id) => ({ timestamp: Date.now() + (k === clients - 1 ? (opts.aheadMs ?? 0) : 0), attributes: { uid: id }, rawstring: `event ${id}` })) }]);
      const targets = nodes();
      const res = await api(targets[(seq + k) % targets.length]!.url, '/api/v1/ingest/humio-structured', { token: ingestToken, body, timeoutMs: 15_000 }).catch(() => null);
      if (res?.status === 200) for (const id of ids) acked.set(id, Date.now());
      await sleep(20);
    }
  };
  const running = Array.from({ length: clients }, (_, k) => client(k));
  return {
    acked,
    async stop() {
      stopped = true;
      await Promise.all(running);
    },
  };
}

export interface StreamCheck {
  events: number;
  ids: number;
  /** Ids seen more than once. */
  twice: string[];
  /** Ids acknowledged in the window that never came. */
  missing: string[];
  /**
   * The answer says its historical part is partial ("Segment files missing, partial results", in
   * the Warning header or an `@warnings` element): a node's part was left out, e.g. a stopping node
   * refused it (docs/replication.md, "Queries").
   */
  partial: boolean;
}

const PARTIAL = 'Segment files missing, partial results';

/**
 * Opens a live stream of `uid=*` over the last minute on `base`, reads it until every id
 * acknowledged from 40 s before it was asked for to `afterMs` after has come (at least `minMs`,
 * at most `maxMs`), and counts each id.
 */
export async function checkLiveStream(base: string, repo: string, token: string, load: LiveLoad, opts: { afterMs?: number; minMs?: number; maxMs?: number } = {}): Promise<StreamCheck> {
  const afterMs = opts.afterMs ?? 1500;
  const asked = Date.now();
  const body = { queryString: 'uid=*', isLive: true, start: '1m' };
  // A kept-alive connection the server closed just then fails the request before any answer: once more.
  const s = await openNdjsonStream(base, repo, token, body, (opts.maxMs ?? 60_000) + 10_000).catch(() => openNdjsonStream(base, repo, token, body, (opts.maxMs ?? 60_000) + 10_000));
  if (s.status !== 200) throw new Error(`live stream on ${base}: ${s.status} ${await s.errorText()}`);
  const counts = new Map<string, number>();
  let events = 0;
  let partial = (s.headers.get('warning') ?? '').includes(PARTIAL);
  const minEnd = Date.now() + (opts.minMs ?? 4000);
  const deadline = Date.now() + (opts.maxMs ?? 60_000);
  const window = (): string[] => [...load.acked].filter(([, at]) => at >= asked - 40_000 && at <= asked + afterMs).map(([id]) => id);
  try {
    for (;;) {
      const now = Date.now();
      if (now > deadline) break;
      // A partial answer need not be waited for: what it misses does not come.
      if (now > minEnd && now > asked + afterMs && (partial || window().every((id) => counts.has(id)))) break;
      const e = await s.next(Math.min(500, deadline - now));
      if (e === null) {
        if (s.ended) break;
        continue;
      }
      if (Array.isArray(e['@warnings'])) partial ||= e['@warnings'].some((w: unknown) => typeof w === 'string' && w.includes(PARTIAL));
      if (typeof e.uid !== 'string') continue;
      events++;
      counts.set(e.uid, (counts.get(e.uid) ?? 0) + 1);
    }
  } finally {
    await s.close();
  }
  return { events, ids: counts.size, twice: [...counts].filter(([, k]) => k > 1).map(([id]) => id), missing: window().filter((id) => !counts.has(id)), partial };
}
