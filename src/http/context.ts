/** The services HTTP handlers call; built by the composition root (src/node). */
import type { Authenticator, Credentials, Principal } from '../auth/index.js';
import { parseAuthorization } from '../auth/index.js';
import type { UserService } from '../accounts/user-service.js';
import type { RepositoryService } from '../repositories/repository-service.js';
import type { ClusterService } from '../cluster/index.js';
import type { HealthService } from '../health/index.js';
import type { GraphqlRequest, GraphqlResponse, GraphqlServices } from '../graphql/index.js';
import type { RequestInfo } from './types.js';
import type { GlobalStore } from '../global/index.js';
import type { IngestLimits, IngestService, IngestTask, IngestTaskResult } from '../ingest/index.js';
import type { Clock } from '../lib/clock.js';
import type { QueryJobRegistry, QueryService } from '../query/index.js';
import type { FileService } from '../files/index.js';
import type { ParserService } from '../parsers/index.js';
import type { ActionService, AlertService } from '../alerts/index.js';
import type { PrometheusEndpoint } from './routes/metrics.js';

import type { ViewService } from '../views/view-service.js';

export interface HttpServices {
  auth: Authenticator;
  health: HealthService;
  cluster: ClusterService;
  users: UserService;
  repositories: RepositoryService;
  graphql: (req: GraphqlRequest) => Promise<GraphqlResponse>;
  graphqlServices: GraphqlServices;
  version: string;
  maxJsonDepth: number;
  explorer: boolean;
  store: GlobalStore;
  ingest: IngestService;
  ingestLimits: IngestLimits;
  maxDecompressedBytes: number;
  /** Ingest bodies at least this large are parsed on the worker pool. */
  offloadIngestBytes: number;
  workers: { ingest(task: IngestTask): Promise<IngestTaskResult> };
  clock: Clock;
  queries: QueryService;
  queryJobs: QueryJobRegistry;
  /** Views: queries over a view search its repositories through each connection's filter. */
  views: ViewService;
  /** Live /query streams served at once. */
  maxLiveStreams: number;
  /** Custom parsers (for ingest: which ones a request may need). */
  parsers: ParserService;
  /** Uploaded lookup files. */
  files: FileService;
  /** files.max_file_bytes. */
  maxFileBytes: number;
  alerts: AlertService;
  actions: ActionService;
  /** Root-only operational metrics (GET /api/v1/metrics). */
  metrics: (reset: boolean) => Record<string, unknown>;
  /** GET /metrics (Prometheus); null when metrics.enabled is false. */
  prometheus: PrometheusEndpoint | null;
  /** Serve the web UI at / (ui.enabled). */
  ui: boolean;
  /** A cluster's segment replication: counts, lag, transfers, per-node holdings (null on a single node). */
  replication?: () => unknown;
}

const requestCreds = new WeakMap<RequestInfo, Credentials | null>();

/**
 * The credentials of a request's Authorization header, parsed once per request (the check before
 * the body and the handler's both read them; a malformed header throws each time).
 */
export function requestCredentials(req: RequestInfo): Credentials | null {
  let c = requestCreds.get(req);
  if (c === undefined) {
    c = parseAuthorization(req.headers.get('authorization'));
    requestCreds.set(req, c);
  }
  return c;
}

/** The API principal (user or local admin) behind a request; 401/403 otherwise. */
export function apiPrincipal(s: HttpServices, req: RequestInfo): Principal {
  return s.auth.apiPrincipal(requestCredentials(req));
}
