/**
 * The REST query API (api-facts §1): `POST .../query` answers a query in one response (text/plain
 * by default, a JSON array, or NDJSON) and streams live filter queries until the client leaves;
 * `.../queryjobs` creates, polls and deletes query jobs. Both `/repositories/` and `/dataspaces/`
 * spellings. Repository members and root only; ingest tokens cannot query.
 */
import { randomFillSync } from 'node:crypto';
import { canSeeRepository, type Principal } from '../../auth/index.js';
import { LogsvcError } from '../../lib/errors.js';
import { parseJsonBounded } from '../../lib/json.js';
import { parseQueryRequest, toJsonRow, toTextLine, type Ev, type Repo } from '../../query/index.js';
import type { QuerySpec } from '../../query/scan.js';
import { streamedRows } from '../../query/stream.js';
import { apiPrincipal, type HttpServices } from '../context.js';
import { json, type Reply, type RequestInfo, type ResponseStream, type Route } from '../types.js';

type Format = 'text' | 'json' | 'ndjson';

/** A streamed /query answer held back until this much of it is ready (or the query is done): see streamedQuery. */
export const STREAM_HOLD_BYTES = 256 * 1024;
/** Live events that may wait while a live query's historical part is streamed; past it the stream is cut. */
const LIVE_WAITING_MAX = 100_000;

const CONTENT_TYPE: Record<Format, string> = {
  text: 'text/plain; charset=utf-8',
  json: 'application/json; charset=utf-8',
  ndjson: 'application/x-ndjson; charset=utf-8',
};

/** The first supported type the client lists; text/plain when it lists none (or `*\/*`). */
function negotiate(accept: string | undefined): Format {
  for (const part of (accept ?? '').split(',')) {
    const type = part.split(';')[0]!.trim().toLowerCase();
    if (type === 'application/x-ndjson' || type === 'application/ndjson') return 'ndjson';
    if (type === 'application/json') return 'json';
    if (type === 'text/plain') return 'text';
  }
  return 'text';
}

/**
 * A query's warnings (a cut result, data left out) as an HTTP `Warning` header: code 299, agent
 * "logsvc", each warning a quoted string (RFC 9111 5.5 syntax). The body of every /query form is a
 * list of events that clients parse as such, so the warnings travel beside it; query jobs carry
 * the same texts in metaData.warnings (api-facts §1.4).
 */
export function warningHeader(warnings: readonly string[]): string | undefined {
  if (warnings.length === 0) return undefined;
  // Header values must be visible ASCII: other characters become "?", quotes and backslashes are escaped.
  return warnings.map((w) => `299 logsvc "${w.replace(/[^\x20-\x7e]/g, '?').replace(/["\\]/g, (c) => `\\${c}`)}"`).join(', ');
}

/** The warnings of a finished /query run, with the cut of the implicit tail(200) of a filter query. */
function runWarnings(run: { query: { isAggregate: boolean; streamed?: true }; outcome: { rows: unknown[]; matched: number; warnings: string[] } | null }): string[] {
  const o = run.outcome;
  if (o === null) return [];
  const out = [...o.warnings];
  if (!run.query.isAggregate && run.query.streamed !== true && o.matched > o.rows.length) {
    out.push(`the result holds the ${o.rows.length} most recent of the ${o.matched} events found: a query without an aggregate ends in tail(200); use tail(limit=N) (at most limit=max) or an aggregate for more`);
  }
  return out;
}

/** The body of a JSON array, one event at a time: `[` before the first, `,` between, `]` at the end. */
function renderer(format: Format): { render: (e: Ev) => string; line: (e: Ev) => string; piece: (line: string) => string; close: () => string } {
  let first = true;
  const line = (e: Ev): string => (format === 'text' ? `${toTextLine(e)}\n` : format === 'ndjson' ? `${JSON.stringify(toJsonRow(e))}\n` : JSON.stringify(toJsonRow(e)));
  const piece = (l: string): string => {
    if (format !== 'json') return l;
    const sep = first ? '[' : ',';
    first = false;
    return `${sep}${l}`;
  };
  return { line, piece, render: (e) => piece(line(e)), close: () => (format !== 'json' ? '' : first ? '[]' : ']') };
}

/**
 * A static /query (api-facts §1.3). An aggregate answers once it is done. A filter query streams
 * every matching event as the scan finds them (each task's events newest first, newer data first),
 * not only the 200 of the implicit tail(): the answer is held back until STREAM_HOLD_BYTES of it are
 * ready or the query is done, so a small answer still carries its warnings (a cut, data left out)
 * in the Warning header and an error is still its status; past that the status and headers go out
 * and the events follow, the scan waiting while the client is slower (uWS backpressure). A bound
 * that stops a stream already under way (query.max_query_seconds, the memory budgets) closes the
 * connection, so the client sees a cut body rather than a complete one; before that, the body's
 * last element names the error (see lastElement). The warnings known when the headers go out are in
 * the Warning header; warnings that arise later (a damaged block or a peer's data left out, found
 * after the stream started) are the body's last element, so every form tells a cut or partial
 * answer (docs/query-streaming.md).
 */
async function streamedQuery(s: HttpServices, spec: QuerySpec, repo: Repo, principal: Principal, format: Format, headers: Record<string, string>): Promise<Reply> {
  spec.stream = true;
  const answer = new HeldAnswer(format);
  const render = (e: Ev): string => answer.render(e);
  const close = (): string => answer.close();
  // In line for a slot (per user, small queries first): src/query/scheduler.ts.
  const run = await s.queries.runQueued(spec, repo, principal.kind === 'user' ? principal.userId : principal.kind, answer.sink);
  await Promise.race([run.done, answer.full]);
  if (run.finished) {
    if (run.error !== null) throw run.error;
    const warning = warningHeader(runWarnings(run));
    if (warning !== undefined) headers.warning = warning;
    // An aggregate's rows, or a filter query's events that all fit in what was held (newest first).
    if (run.query.streamed !== true) return { status: 200, headers, body: run.outcome!.rows.map(render).join('') + close() };
    return { status: 200, headers, body: answer.heldText('newest') + close() };
  }
  // A client that left meanwhile never gets the stream: stop the query once the reply was not taken.
  setImmediate(() => {
    if (answer.attachedTo !== null) return;
    answer.leave();
    run.cancel();
  });
  const early = [...run.warnings];
  const warning = warningHeader(early);
  if (warning !== undefined) headers.warning = warning;
  return {
    status: 200,
    headers,
    stream: (o) => {
      answerStreams.add(o);
      o.onClose(() => {
        answer.leave();
        run.cancel();
        answerStreams.delete(o);
      });
      answer.attach(o, 'asHeld');
      void run.done.then(() => {
        answerStreams.delete(o);
        if (o.closed) return;
        if (run.error !== null) {
          o.write(answer.lastElement([], run.error));
          o.abort();
          return;
        }
        o.write(answer.lastElement(lateWarnings(run, early)) + close());
        o.end();
      });
    },
  };
}

/**
 * The events of a streamed filter query (stream.ts) on their way to the client: held (rendered)
 * until STREAM_HOLD_BYTES are ready, then written to the attached response as partials arrive,
 * waiting while the client is slower (to the query's deadline).
 */
class HeldAnswer {
  private readonly r: ReturnType<typeof renderer>;
  private held: { ts: number; line: string }[] = [];
  private heldBytes = 0;
  attachedTo: ResponseStream | null = null;
  private gone = false;
  private release: () => void = () => undefined;
  private readonly attached = new Promise<void>((r) => {
    this.release = r;
  });
  private fill: () => void = () => undefined;
  /** Resolves once STREAM_HOLD_BYTES are held: the answer must start streaming. */
  readonly full = new Promise<void>((r) => {
    this.fill = r;
  });

  constructor(private readonly format: Format) {
    this.r = renderer(format);
  }

  /** The run's PartialSink. */
  readonly sink = async (state: unknown, deadline: number): Promise<void> => {
    for (const e of streamedRows(state)) {
      if (this.gone) return;
      const out = this.attachedTo;
      if (out === null) {
        const l = this.r.line(e);
        this.held.push({ ts: e.timestamp(), line: l });
        this.heldBytes += l.length;
        if (this.heldBytes >= STREAM_HOLD_BYTES) {
          this.fill();
          await this.attached;
        }
      } else if (!out.write(this.r.render(e))) await untilWritable(out, deadline);
    }
  };

  /** What was held, as one piece of the body, newest or oldest first. */
  heldText(order: 'newest' | 'oldest'): string {
    const sign = order === 'newest' ? 1 : -1;
    const text = this.held
      .sort((a, b) => sign * (b.ts - a.ts) || 0)
      .map((h) => this.r.piece(h.line))
      .join('');
    this.held = [];
    return text;
  }

  /** Sends what was held and streams the rest to `out`. */
  attach(out: ResponseStream, order: 'asHeld' | 'oldest'): void {
    if (order === 'oldest') out.write(this.heldText('oldest'));
    else {
      out.write(this.held.map((h) => this.r.piece(h.line)).join(''));
      this.held = [];
    }
    this.attachedTo = out;
    this.release();
  }

  /** The client is gone (or never took the reply): nothing more is rendered; a waiting sink goes on. */
  leave(): void {
    this.gone = true;
    this.release();
  }

  /** Renders one event (a live one, an aggregate's row) in this answer's format. */
  render(e: Ev): string {
    return this.r.render(e);
  }

  /** The end of the body (`]` of a JSON array). */
  close(): string {
    return this.r.close();
  }

  /**
   * What a streamed answer says last when its headers could not: the warnings that arose after
   * they went out, or the error that stops it (then the connection is cut). NDJSON and JSON: one
   * element `{"@warnings": [...]}` or `{"@error": "...", "@errorCode": "E_..."}`, fields no stored
   * event has; text: one line per warning `logsvc warning: ...`, or `logsvc error: ...`. '' when
   * there is nothing to say.
   */
  lastElement(warnings: readonly string[], error?: LogsvcError): string {
    if (warnings.length === 0 && error === undefined) return '';
    if (this.format === 'text') {
      if (error !== undefined) return `logsvc error: ${error.message.replace(/\r?\n/g, ' ')}\n`;
      return warnings.map((w) => `logsvc warning: ${w.replace(/\r?\n/g, ' ')}\n`).join('');
    }
    const o = error !== undefined ? { '@error': error.message, '@errorCode': error.code } : { '@warnings': warnings };
    return this.r.piece(this.format === 'ndjson' ? `${JSON.stringify(o)}\n` : JSON.stringify(o));
  }
}

/** The warnings of a finished streamed run that were not in its headers (`early`). */
function lateWarnings(run: Parameters<typeof runWarnings>[0], early: readonly string[]): string[] {
  const sent = new Set(early);
  return runWarnings(run).filter((w) => !sent.has(w));
}

/** Waits for a slow client to take what was buffered, at most until the query's deadline. */
async function untilWritable(out: ResponseStream, deadline: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((r) => {
    timer = setTimeout(() => r('late'), Math.max(0, deadline - Date.now()));
  });
  try {
    if ((await Promise.race([out.writable(), late])) === 'late') {
      throw new LogsvcError('E_QUERY_LIMIT', 'the client did not read the streamed answer before the query ran out of time (query.max_query_seconds)');
    }
  } finally {
    clearTimeout(timer);
  }
}

function ownerOf(p: Principal): string {
  return p.kind === 'user' ? `user:${p.userId}` : p.kind;
}

/** Streams that must end when the node stops. */
const openStreams = new Set<ResponseStream>();

/** Streamed static answers: cut (the connection closed) when the node stops, never ended as if complete. */
const answerStreams = new Set<ResponseStream>();

export function closeQueryStreams(): void {
  for (const s of openStreams) s.end();
  openStreams.clear();
  for (const s of answerStreams) s.abort();
  answerStreams.clear();
}

/** Random bytes for query ids, drawn 4 KiB at a time (one call into the CSPRNG per 227 queries, not one each). */
const idPool = Buffer.alloc(18 * 227);
let idAt = idPool.length;

/** 18 random bytes as base64url: a query's id. */
function queryId(): string {
  if (idAt === idPool.length) {
    randomFillSync(idPool);
    idAt = 0;
  }
  idAt += 18;
  return idPool.toString('base64url', idAt - 18, idAt);
}

export function queryRoutes(s: HttpServices): Route[] {
  const target = (req: RequestInfo): { principal: Principal; repo: Repo } => {
    const principal = apiPrincipal(s, req);
    const name = req.params.repo!;
    const repo = s.store.state.repositoryByName(name);
    if (repo === undefined) {
      // A view: its members search its repositories through the connections' filters.
      const view = principal.kind === 'ingest' ? undefined : s.views.find(principal, name);
      if (view !== undefined) return { principal, repo: s.views.target(view) };
    }
    if (repo === undefined || !canSeeRepository(s.store.state, principal, repo)) throw new LogsvcError('E_NOT_FOUND', `repository "${name}" does not exist or you have no access to it`);
    return { principal, repo: { id: repo.id, name: repo.name } };
  };

  const query = async (req: RequestInfo, body: Buffer): Promise<Reply> => {
    const { repo, principal } = target(req);
    const request = parseQueryRequest(parseJsonBounded(body.toString('utf8'), s.maxJsonDepth, 'query request'));
    const format = negotiate(req.headers.get('accept'));
    const headers: Record<string, string> = { 'content-type': CONTENT_TYPE[format], 'humio-query-id': `IQ-${queryId()}` };
    const filename = req.headers.get('x-desired-filename');
    if (filename !== undefined) headers['content-disposition'] = `attachment; filename="${filename.replace(/["\\\r\n]/g, '_').slice(0, 255)}"`;
    const spec = await s.queries.prepare(request, repo);

    if (!request.isLive) return streamedQuery(s, spec, repo, principal, format, headers);

    // Live: the historical part (every matching event, streamed as a static answer is), then each
    // new matching event as it is digested. Events heard before the historical part is out wait,
    // so the output stays in order; past LIVE_WAITING_MAX of them the stream is cut.
    if (openStreams.size >= s.maxLiveStreams) throw new LogsvcError('E_TOO_MANY_REQUESTS', `${openStreams.size} live queries are streaming, the most this node serves (query.max_concurrent)`);
    spec.stream = true;
    const answer = new HeldAnswer(format);
    const waiting: Ev[] = [];
    let stream: ResponseStream | null = null;
    let overflow = false;
    const follow = await s.queries.follow(
      spec,
      repo,
      (e) => {
        if (stream !== null) stream.write(answer.render(e));
        else if (waiting.length < LIVE_WAITING_MAX) waiting.push(e);
        else overflow = true;
      },
      answer.sink,
    );
    const historical = follow.historical;
    // A historical part that fits in what is held finishes before the status is sent, so that its
    // error is the answer and its warnings go into the headers.
    let started = false;
    await Promise.race([historical.done, answer.full]);
    if (historical.finished && historical.error !== null) {
      follow.stop();
      throw historical.error;
    }
    const early = historical.finished ? runWarnings(historical) : [...historical.warnings];
    const warning = warningHeader(early);
    if (warning !== undefined) headers.warning = warning;
    // A client that left meanwhile never gets the stream: stop following once the reply was not taken.
    setImmediate(() => {
      if (started) return;
      follow.stop();
      answer.leave();
      historical.cancel();
    });
    return {
      status: 200,
      headers,
      stream: (out) => {
        started = true;
        openStreams.add(out);
        out.onClose(() => {
          follow.stop();
          answer.leave();
          historical.cancel();
          openStreams.delete(out);
        });
        // A stream reads oldest to newest where it can: a historical part that is all held is sorted.
        answer.attach(out, historical.finished ? 'oldest' : 'asHeld');
        void historical.done.then(() => {
          if (out.closed) return;
          if (historical.error !== null || overflow) {
            follow.stop();
            const why = historical.error ?? new LogsvcError('E_QUERY_LIMIT', `more than ${LIVE_WAITING_MAX} new events arrived while the historical part was streamed; the live stream was cut`);
            out.write(answer.lastElement([], why));
            out.abort();
            return;
          }
          // Warnings of the historical part found after the headers went out, then the live events.
          out.write(answer.lastElement(lateWarnings(historical, early)));
          out.write(waiting.map((e) => answer.render(e)).join(''));
          waiting.length = 0;
          stream = out;
        });
      },
    };
  };

  const routes: Route[] = [];
  for (const prefix of ['repositories', 'dataspaces']) {
    const base = `/api/v1/${prefix}/:repo`;
    routes.push({ method: 'POST', pattern: `${base}/query`, body: 'api', handle: query });
    routes.push({
      method: 'POST',
      pattern: `${base}/queryjobs`,
      body: 'api',
      handle: async (req, body) => {
        const { principal, repo } = target(req);
        const request = parseQueryRequest(parseJsonBounded(body.toString('utf8'), s.maxJsonDepth, 'query request'));
        const spec = await s.queries.prepare(request, repo);
        return json(200, s.queryJobs.create(ownerOf(principal), repo, request, spec));
      },
    });
    routes.push({
      method: 'GET',
      pattern: `${base}/queryjobs/:id`,
      body: 'none',
      handle: (req) => {
        const { principal, repo } = target(req);
        return json(200, s.queryJobs.poll(ownerOf(principal), repo, req.params.id!));
      },
    });
    routes.push({
      method: 'DELETE',
      pattern: `${base}/queryjobs/:id`,
      body: 'none',
      handle: (req) => {
        const { principal, repo } = target(req);
        s.queryJobs.delete(ownerOf(principal), repo, req.params.id!);
        return { status: 204 };
      },
    });
  }
  return routes;
}
