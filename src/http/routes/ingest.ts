/**
 * Ingest endpoints: structured, unstructured and raw bodies with ingest tokens (the product's
 * `service-*` and `humio-*` names), and the repository-scoped `/ingest` and `/ingest-messages` with
 * an API token of a member (both the `/repositories/` and the older `/dataspaces/` spelling).
 * Success is 200 with `{}`, sent only once the events are durable.
 */
import { canSeeRepository, type Principal } from '../../auth/index.js';
import { LogsvcError } from '../../lib/errors.js';
import type { IngestTarget } from '../../ingest/ingest-request.js';
import { ingestBody } from '../../ingest/ingest-request.js';
import { requestCredentials, type HttpServices } from '../context.js';
import { json, type RequestInfo, type Route } from '../types.js';

type Kind = 'structured' | 'unstructured' | 'raw';

type Target = IngestTarget;

/** The repository and parser of the ingest token a request carries (in the Authorization header, or `token`). */
export function ingestTarget(s: HttpServices, req: RequestInfo, token?: string): Target {
  const creds = token === undefined ? requestCredentials(req) : { token };
  const p = s.auth.ingestPrincipal(creds);
  const repo = s.store.state.repositories.get(p.repositoryId);
  const t = repo?.ingestTokens.get(p.tokenName);
  if (repo === undefined || t === undefined) throw new LogsvcError('E_AUTH_INVALID', 'the ingest token is not valid');
  return { repo, parser: t.parser };
}

export function ingestRoutes(s: HttpServices): Route[] {
  const byIngestToken = (req: RequestInfo, token?: string): Target => ingestTarget(s, req, token);

  const byRepository = (req: RequestInfo): Target => {
    const name = req.params.repo!;
    const creds = requestCredentials(req);
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
    if (repo === undefined || !canSeeRepository(s.store.state, principal, repo)) throw new LogsvcError('E_NOT_FOUND', `repository "${name}" does not exist or you have no access to it`);
    return { repo, parser: null };
  };

  const handle = (kind: Kind, target: (req: RequestInfo) => Target) => async (req: RequestInfo, raw: Buffer) => {
    await ingestBody(s, target(req), kind, raw, req.headers.get('content-encoding'));
    return json(200, {});
  };

  const routes: Route[] = [];
  const add = (pattern: string, kind: Kind, target: (req: RequestInfo) => Target, preAuth?: Route['preAuth']): void => {
    routes.push({ method: 'POST', pattern, body: 'ingest', handle: handle(kind, target), ...(preAuth === undefined ? {} : { preAuth }) });
  };
  for (const name of ['service', 'humio']) {
    add(`/api/v1/ingest/${name}-structured`, 'structured', (r) => byIngestToken(r));
    add(`/api/v1/ingest/${name}-unstructured`, 'unstructured', (r) => byIngestToken(r));
  }
  add('/api/v1/ingest/raw', 'raw', (r) => byIngestToken(r));
  // The token is in the path: checked from there before the body is read.
  add(
    '/api/v1/ingest/raw/:token',
    'raw',
    (r) => byIngestToken(r, r.params.token!),
    (r) => void byIngestToken(r, r.params.token!),
  );
  for (const prefix of ['repositories', 'dataspaces']) {
    add(`/api/v1/${prefix}/:repo/ingest`, 'structured', byRepository);
    add(`/api/v1/${prefix}/:repo/ingest-messages`, 'unstructured', byRepository);
  }
  return routes;
}

