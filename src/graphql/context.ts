/** What every resolver receives: the authenticated principal and the domain services. */
import type { Principal } from '../auth/index.js';
import type { UserService } from '../accounts/user-service.js';
import type { GroupService } from '../accounts/group-service.js';
import type { RepositoryService } from '../repositories/repository-service.js';
import type { ClusterService, ClusterSizes, NodeSizes } from '../cluster/index.js';
import type { FileService } from '../files/index.js';
import type { ParserService } from '../parsers/index.js';
import type { ActionService, AlertService } from '../alerts/index.js';
import type { ListenerService } from '../ingest/listeners/listener-service.js';
import type { ViewService } from '../views/view-service.js';
import type { SavedQueryService } from '../saved-queries/saved-query-service.js';
import type { RedactionService } from '../redaction/index.js';

/** Sizes of what is stored (repositories: over the cluster; node: this node's catalog and disk) and the ingest volume. */
export interface StorageStats {
  repositorySizes(repositoryId: string): { compressed: number; uncompressed: number };
  /** Bytes and events ingested per UTC day (days since the epoch), newest first, over the cluster. */
  ingestVolume(repositoryId: string): { day: number; bytes: number; events: number }[];
  node(): { segmentBytes: number; diskTotal: number; diskFree: number; wipBytes: number };
  /** Another node's disk as its last heartbeat said, or null (not heard from, or a single node). */
  peerNode?(nodeId: number): { diskTotal: number; diskFree: number; wipBytes: number } | null;
  /** A cluster's segments: how well each is held, and per node what it holds (null on a single node). */
  replication?(): { cluster: ClusterSizes; nodes: NodeSizes[] } | null;
}

export interface GraphqlServices {
  users: UserService;
  groups: GroupService;
  repositories: RepositoryService;
  cluster: ClusterService;
  files: FileService;
  parsers: ParserService;
  alerts: AlertService;
  actions: ActionService;
  /** Ingest listeners (absent in tests that build GraphQL without them). */
  listeners?: ListenerService;
  storage: StorageStats;
  views: ViewService;
  savedQueries: SavedQueryService;
  redactions: RedactionService;
  /** This node's id (the cluster's node list marks its own sizes). */
  selfId: number;
  version: string;
}

export type GraphqlContext = {
  principal: Principal;
  services: GraphqlServices;
};
