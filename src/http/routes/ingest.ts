/**
 * Ingest endpoints: structured, unstructured and raw bodies with ingest tokens (the product's
 * `service-*` and `humio-*` names), and the repository-scoped `/ingest` and `/ingest-messages` with
 * an API token of a member (both the `/repositories/` and the older `/dataspaces/` spelling).
 * Success is 200 with `{}`, sent only once the events are durable.
 */
import { parseAuthorization, canSeeRepository, type Principal } from '../../auth/index.js';
import { LogsvcError } from '../../lib/errors.js';
import type { Repository } from '../../global/index.js';
import { hasCustomParsers, runIngestTask, unwrapIngestResult, type IngestKind, type IngestTask } from '../../ingest/index.js';
import type { DoorParams, DoorReply } from '../../ingest/doors/index.js';
import type { HttpServices } from '../context.js';
import { json, type RequestInfo, type Route } from '../types.js';

type Kind = 'structured' | 'unstructured' | 'raw';

export interface Target {
  repo: Repository;
  /** The parser attached to the ingest token, if the request used one. */
  parser: string | null;
}

/** The repository and parser of the ingest token a request carries (in the Authorization header, or `token`). */
export function ingestTarget(s: HttpServices, req: RequestInfo, token?: string): Target {
  const creds = token === undefined ? parseAuthorization(req.headers.get('authorization')) : { token };
  const p = s.auth.ingestPrincipal(creds);
  const repo = s.store.state.repositories.get(p.repositoryId);
  const t = repo?.ingestTokens.get(p.tokenName);
  if (repo === undefined || t === undefined) throw new LogsvcError('E_AUTH_INVALID', 'the ingest token is not valid');
  return { repo, parser: t.parser };
}

/**
 * Admits, parses (inline or on the worker pool) and commits one ingest body; resolves once its
 * events are durable. `door` makes it a shipper protocol's body (src/ingest/doors/); their custom
 * parsers are looked up as for unstructured bodies when `anyParser` (a HEC sourcetype or a bulk
 * document's type may name one), else only the target's.
 */
export async function ingestBody(
  s: HttpServices,
  t: Target,
  kind: IngestKind,
  raw: Buffer,
  contentEncoding: string | undefined,
  door?: { params: DoorParams; anyParser: boolean },
): Promise<{ events: number; reply?: DoorReply }> {
  s.ingest.admit();
  const task: IngestTask = {
    kind,
    body: raw,
    contentEncoding,
    maxDecompressedBytes: s.maxDecompressedBytes,
    limits: s.ingestLimits,
    parser: t.parser,
    repositoryId: t.repo.id,
    at: s.clock.now(),
  };
  if (door !== undefined) task.door = door.params;
  task.customParsers = s.parsers.defsForIngest(t.repo.id, t.parser, door === undefined ? (kind as 'structured' | 'unstructured' | 'raw') : door.anyParser ? 'unstructured' : 'raw');
  if (hasCustomParsers(task)) {
    task.parserLimits = s.parsers.timeLimits;
    const room = s.ingest.datasourceRoom(t.repo.id);
    if (room !== undefined) task.datasourceRoom = room;
  } else delete task.customParsers;
  // Large bodies are parsed on the worker pool; small ones here, where a hop would cost more.
  // Custom parsers never run here: their cost does not follow the body's size (a small gzip body,
  // a costly script), and this thread serves every acknowledgement, query and health check.
  const result = raw.length >= s.offloadIngestBytes || hasCustomParsers(task) ? await s.workers.ingest(task) : runIngestTask(task);
  if (!result.ok && result.detail !== undefined) throw Object.assign(new LogsvcError(result.code, result.message), { detail: result.detail });
  const { payload, summary, events } = unwrapIngestResult(result);
  await s.ingest.commit(t.repo.id, payload, summary);
  return result.ok && result.reply !== undefined ? { events, reply: result.reply } : { events };
}

export function ingestRoutes(s: HttpServices): Route[] {
  const byIngestToken = (req: RequestInfo, token?: string): Target => ingestTarget(s, req, token);

  const byRepository = (req: RequestInfo): Target => {
    const name = req.params.repo!;
    const creds = parseAuthorization(req.headers.get('authorization'));
    let principal: Principal;
    try {
      principal = s.auth.apiPrincipal(creds);
    } catch (err) {
      // An ingest token of this very repository is also accepted here.
      if (!(err instanceof LogsvcError) || err.code !== 'E_FORBIDDEN') throw err;
      const t = byIngestToken(req);
      if (t.repo.name !== name) throw new LogsvcError('E_FORBIDDEN', `the ingest token does not belong to repository "${name}"`);
      return t;
    }
    const repo = s.store.state.repositoryByName(name);
    if (repo === undefined || !canSeeRepository(principal, repo)) throw new LogsvcError('E_NOT_FOUND', `repository "${name}" does not exist or you have no access to it`);
    return { repo, parser: null };
  };

  const handle = (kind: Kind, target: (req: RequestInfo) => Target) => async (req: RequestInfo, raw: Buffer) => {
    await ingestBody(s, target(req), kind, raw, req.headers.get('content-encoding'));
    return json(200, {});
  };

  const routes: Route[] = [];
  const add = (pattern: string, kind: Kind, target: (req: RequestInfo) => Target): void => {
    routes.push({ method: 'POST', pattern, body: 'ingest', handle: handle(kind, target) });
  };
  for (const name of ['service', 'humio']) {
    add(`/api/v1/ingest/${name}-structured`, 'structured', (r) => byIngestToken(r));
    add(`/api/v1/ingest/${name}-unstructured`, 'unstructured', (r) => byIngestToken(r));
  }
  add('/api/v1/ingest/raw', 'raw', (r) => byIngestToken(r));
  add('/api/v1/ingest/raw/:token', 'raw', (r) => byIngestToken(r, r.params.token!));
  for (const prefix of ['repositories', 'dataspaces']) {
    add(`/api/v1/${prefix}/:repo/ingest`, 'structured', byRepository);
    add(`/api/v1/${prefix}/:repo/ingest-messages`, 'unstructured', byRepository);
  }
  return routes;
}

