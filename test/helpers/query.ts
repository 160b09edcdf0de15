/**
 * Helpers for tests of the REST query API (api-facts §1) against a real node: repositories and
 * members through GraphQL, known events through structured/unstructured ingest, `/query` in each
 * output format, query jobs polled to completion, and a line reader over a streamed (chunked)
 * NDJSON response. Every wait is bounded.
 */
import { api, gql, type ApiResponse } from './http.js';

// --- GraphQL -----------------------------------------------------------------------------------------

export async function mustGql(base: string, token: string, query: string, variables?: Record<string, unknown>): Promise<any> {
  const r = await gql(base, token, query, variables);
  if (r.status !== 200 || r.errors !== undefined) throw new Error(`GraphQL failed: ${r.status} ${JSON.stringify(r.errors)}\n${query}`);
  return r.data;
}

/** Creates repository `name`; returns its default ingest token. */
export async function createRepo(base: string, adminToken: string, name: string): Promise<{ id: string; name: string; ingestToken: string }> {
  const d = await mustGql(base, adminToken, 'mutation($n: String!) { createRepository(name: $n) { repository { id name ingestTokens { token } } } }', { n: name });
  const repo = d.createRepository.repository;
  return { id: repo.id as string, name: repo.name as string, ingestToken: repo.ingestTokens[0].token as string };
}

export async function addMember(base: string, adminToken: string, repo: string, username: string): Promise<void> {
  await mustGql(base, adminToken, 'mutation($r: String!, $u: String!) { addMember(searchDomainName: $r, username: $u) { clientMutationId } }', { r: repo, u: username });
}

// --- ingest ------------------------------------------------------------------------------------------

export interface KnownEvent {
  timestamp: number;
  rawstring: string;
  attributes: Record<string, string | number>;
  tags: Record<string, string>;
}

/**
 * Sends `events` through /api/v1/ingest/humio-structured, one group per tag set, in requests of at
 * most `batch` events; throws unless every request is acknowledged with 200.
 */
export async function ingestStructured(base: string, ingestToken: string, events: readonly KnownEvent[], batch = 500): Promise<void> {
  for (let i = 0; i < events.length; i += batch) {
    const groups = new Map<string, { tags: Record<string, string>; events: unknown[] }>();
    for (const e of events.slice(i, i + batch)) {
      const key = JSON.stringify(Object.entries(e.tags).sort());
      let g = groups.get(key);
      if (g === undefined) groups.set(key, (g = { tags: e.tags, events: [] }));
      g.events.push({ timestamp: e.timestamp, rawstring: e.rawstring, attributes: e.attributes });
    }
    const res = await api(base, '/api/v1/ingest/humio-structured', { token: ingestToken, body: JSON.stringify([...groups.values()]) });
    if (res.status !== 200) throw new Error(`structured ingest failed: ${res.status} ${res.text}`);
  }
}

/** Sends raw lines through /api/v1/ingest/humio-unstructured with parser `type` (kv by default). */
export async function ingestUnstructured(base: string, ingestToken: string, messages: string[], opts: { type?: string; tags?: Record<string, string>; fields?: Record<string, string> } = {}): Promise<void> {
  const item: Record<string, unknown> = { messages };
  if (opts.type !== undefined) item.type = opts.type;
  if (opts.tags !== undefined) item.tags = opts.tags;
  if (opts.fields !== undefined) item.fields = opts.fields;
  const res = await api(base, '/api/v1/ingest/humio-unstructured', { token: ingestToken, body: JSON.stringify([item]) });
  if (res.status !== 200) throw new Error(`unstructured ingest failed: ${res.status} ${res.text}`);
}

// --- /query ------------------------------------------------------------------------------------------

export type Format = 'text' | 'json' | 'ndjson';

export const ACCEPT: Record<Format, string> = { text: 'text/plain', json: 'application/json', ndjson: 'application/x-ndjson' };

export interface QueryOptions {
  token: string;
  /** Accept header; omitted: no Accept header at all (the default format). */
  format?: Format;
  accept?: string;
  prefix?: 'repositories' | 'dataspaces';
  headers?: Record<string, string>;
  timeoutMs?: number;
}

/** POST .../<repo>/query with `body` (an object is sent as JSON; a string as is). */
export async function postQuery(base: string, repo: string, body: unknown, opts: QueryOptions): Promise<ApiResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(opts.headers ?? {}) };
  const accept = opts.accept ?? (opts.format === undefined ? undefined : ACCEPT[opts.format]);
  if (accept !== undefined) headers.accept = accept;
  return api(base, `/api/v1/${opts.prefix ?? 'repositories'}/${encodeURIComponent(repo)}/query`, {
    token: opts.token,
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    timeoutMs: opts.timeoutMs ?? 30_000,
  });
}

/** The rows of a 200 JSON-array answer; throws with the answer otherwise. */
export async function queryJson(base: string, repo: string, body: unknown, opts: QueryOptions): Promise<Record<string, any>[]> {
  const res = await postQuery(base, repo, body, { ...opts, format: 'json' });
  if (res.status !== 200) throw new Error(`query ${JSON.stringify(body)} failed: ${res.status} ${res.text}`);
  const rows = res.json();
  if (!Array.isArray(rows)) throw new Error(`query ${JSON.stringify(body)}: not a JSON array: ${res.text.slice(0, 500)}`);
  return rows as Record<string, any>[];
}

/** NDJSON body -> objects; throws if the body is not lines of JSON each ending in "\n". */
export function parseNdjson(text: string): Record<string, any>[] {
  if (text === '') return [];
  if (!text.endsWith('\n')) throw new Error(`NDJSON body does not end with a newline: ${JSON.stringify(text.slice(-200))}`);
  return text
    .slice(0, -1)
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, any>);
}

/** `count()` (or `<filter> | count()`) as a number; throws when the answer is not one `_count` row. */
export async function countOf(base: string, repo: string, token: string, filter = '', extra: Record<string, unknown> = {}): Promise<number> {
  const q = filter === '' ? 'count()' : `${filter} | count()`;
  const rows = await queryJson(base, repo, { queryString: q, ...extra }, { token });
  if (rows.length !== 1 || typeof rows[0]!._count !== 'string') throw new Error(`count(): unexpected answer ${JSON.stringify(rows)}`);
  return Number(rows[0]!._count);
}

/**
 * Polls `count()` until it equals `expected` or `timeoutMs` passes; returns the last count seen. A
 * refused poll (a node with a short query time limit still digesting on a busy machine, a 429) is
 * asked again until the deadline, then its error is thrown.
 */
export async function waitForCount(base: string, repo: string, token: string, expected: number, timeoutMs = 60_000, filter = ''): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let last = -1;
  for (;;) {
    try {
      last = await countOf(base, repo, token, filter);
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(250);
      continue;
    }
    if (last === expected || Date.now() > deadline) return last;
    await sleep(100);
  }
}

// --- query jobs --------------------------------------------------------------------------------------

export interface JobPoll {
  cancelled: boolean;
  done: boolean;
  events: Record<string, any>[];
  metaData: Record<string, any>;
}

export function jobsPath(repo: string, prefix: 'repositories' | 'dataspaces' = 'repositories'): string {
  return `/api/v1/${prefix}/${encodeURIComponent(repo)}/queryjobs`;
}

export async function createJob(base: string, repo: string, token: string, body: unknown, prefix: 'repositories' | 'dataspaces' = 'repositories'): Promise<ApiResponse> {
  return api(base, jobsPath(repo, prefix), { token, body: typeof body === 'string' ? body : JSON.stringify(body), timeoutMs: 15_000 });
}

export async function pollOnce(base: string, repo: string, token: string, id: string, prefix: 'repositories' | 'dataspaces' = 'repositories'): Promise<ApiResponse> {
  return api(base, `${jobsPath(repo, prefix)}/${encodeURIComponent(id)}`, { token, timeoutMs: 15_000 });
}

export async function deleteJob(base: string, repo: string, token: string, id: string): Promise<ApiResponse> {
  return api(base, `${jobsPath(repo)}/${encodeURIComponent(id)}`, { token, method: 'DELETE', timeoutMs: 15_000 });
}

/**
 * Polls job `id` until `done` (sleeping `metaData.pollAfter` ms, capped at `maxSleepMs`) or until
 * `timeoutMs` passes; throws on a non-200 poll or a timeout. Returns every poll answer, the last
 * one done.
 */
export async function pollUntilDone(base: string, repo: string, token: string, id: string, opts: { timeoutMs?: number; maxSleepMs?: number } = {}): Promise<JobPoll[]> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  const polls: JobPoll[] = [];
  for (;;) {
    const res = await pollOnce(base, repo, token, id);
    if (res.status !== 200) throw new Error(`poll of ${id}: ${res.status} ${res.text}`);
    const p = res.json() as JobPoll;
    polls.push(p);
    if (p.done === true) return polls;
    if (Date.now() > deadline) throw new Error(`job ${id} not done after ${opts.timeoutMs ?? 30_000} ms: ${res.text.slice(0, 500)}`);
    const after = typeof p.metaData?.pollAfter === 'number' ? p.metaData.pollAfter : 200;
    await sleep(Math.max(10, Math.min(after, opts.maxSleepMs ?? 1000)));
  }
}

/** Creates a job and polls it to completion; throws when creation is not 200. */
export async function runJob(base: string, repo: string, token: string, body: Record<string, unknown>): Promise<{ id: string; queryOnView: string; final: JobPoll; polls: JobPoll[] }> {
  const created = await createJob(base, repo, token, body);
  if (created.status !== 200) throw new Error(`create job ${JSON.stringify(body)}: ${created.status} ${created.text}`);
  const { id, queryOnView } = created.json() as { id: string; queryOnView: string };
  const polls = await pollUntilDone(base, repo, token, id);
  return { id, queryOnView, final: polls.at(-1)!, polls };
}

// --- streamed NDJSON ---------------------------------------------------------------------------------

export interface NdjsonStream {
  status: number;
  headers: Headers;
  /** The next object, or null when the stream ended or nothing came within `timeoutMs`. */
  next(timeoutMs: number): Promise<Record<string, any> | null>;
  /** Objects that arrive within `ms` (stops early at the end of the stream). */
  collectFor(ms: number): Promise<Record<string, any>[]>;
  /** Whether the server ended the body. */
  readonly ended: boolean;
  /** Text that arrived but is not a whole line yet. */
  readonly partial: string;
  /** Cancels the reader and aborts the request. */
  close(): Promise<void>;
  /** The response's full text when it was not a stream (non-200). */
  errorText(): Promise<string>;
}

/**
 * POSTs a (live) query with `Accept: application/x-ndjson` and returns a reader over its chunked
 * body. The request is aborted after `maxMs` at the latest.
 */
export async function openNdjsonStream(base: string, repo: string, token: string, body: unknown, maxMs = 60_000): Promise<NdjsonStream> {
  const ctl = new AbortController();
  const hardStop = setTimeout(() => ctl.abort(), maxMs);
  hardStop.unref();
  const res = await fetch(new URL(`/api/v1/repositories/${encodeURIComponent(repo)}/query`, base), {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/x-ndjson' },
    body: JSON.stringify(body),
    signal: AbortSignal.any([ctl.signal, AbortSignal.timeout(maxMs + 1000)]),
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  let ended = false;
  const queue: Record<string, any>[] = [];
  let pendingRead: Promise<void> | null = null;

  const pump = (): Promise<void> => {
    pendingRead ??= reader.read().then(
      ({ done, value }) => {
        pendingRead = null;
        if (done) {
          ended = true;
          buf += decoder.decode();
          return;
        }
        buf += decoder.decode(value, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf('\n')) !== -1) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line.trim() !== '') queue.push(JSON.parse(line) as Record<string, any>);
        }
      },
      () => {
        pendingRead = null;
        ended = true;
      },
    );
    return pendingRead;
  };

  const next = async (timeoutMs: number): Promise<Record<string, any> | null> => {
    const deadline = Date.now() + timeoutMs;
    while (queue.length === 0 && !ended) {
      const left = deadline - Date.now();
      if (left <= 0) return null;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), left)));
      const r = await Promise.race([pump().then(() => 'data' as const), timedOut]);
      clearTimeout(timer);
      if (r === 'timeout') return queue.shift() ?? null;
    }
    return queue.shift() ?? null;
  };

  return {
    status: res.status,
    headers: res.headers,
    next,
    async collectFor(ms: number) {
      const deadline = Date.now() + ms;
      const out: Record<string, any>[] = [];
      for (;;) {
        const left = deadline - Date.now();
        if (left <= 0) return out;
        const e = await next(left);
        if (e === null) return out;
        out.push(e);
      }
    },
    get ended() {
      return ended;
    },
    get partial() {
      return buf;
    },
    async close() {
      clearTimeout(hardStop);
      await reader.cancel().catch(() => undefined);
      ctl.abort();
    },
    async errorText() {
      clearTimeout(hardStop);
      let text = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      return text + decoder.decode();
    },
  };
}

// --- misc --------------------------------------------------------------------------------------------

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Asks `fn` every 200 ms until `ok` holds for its answer (returned); after `timeoutMs` throws, naming `what` and the last answer. */
export async function until<T>(what: string, fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(v)}`);
    await sleep(200);
  }
}

/** Keys of the poll response's metaData that api-facts §1.4 lists (Humio 1.9.2 recording). */
export const METADATA_KEYS = [
  'eventCount',
  'processedEvents',
  'processedBytes',
  'isAggregate',
  'pollAfter',
  'queryStart',
  'queryEnd',
  'resultBufferSize',
  'timeMillis',
  'totalWork',
  'workDone',
  'warnings',
  'extraData',
  'filterQuery',
] as const;

/** metaData keys that humioctl decodes into uint64. */
export const METADATA_INTEGER_KEYS = ['eventCount', 'processedEvents', 'processedBytes', 'pollAfter', 'queryStart', 'queryEnd', 'resultBufferSize', 'timeMillis', 'totalWork', 'workDone'] as const;
