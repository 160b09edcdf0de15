/** What every resolver receives: the authenticated principal and the domain services. */
import type { Principal } from '../auth/index.js';
import type { UserService } from '../accounts/user-service.js';
import type { RepositoryService } from '../repositories/repository-service.js';
import type { ClusterService } from '../cluster/index.js';
import type { FileService } from '../files/index.js';
import type { ParserService } from '../parsers/index.js';
import type { ActionService, AlertService } from '../alerts/index.js';
import type { ListenerService } from '../ingest/listeners/listener-service.js';

export interface GraphqlServices {
  users: UserService;
  repositories: RepositoryService;
  cluster: ClusterService;
  files: FileService;
  parsers: ParserService;
  alerts: AlertService;
  actions: ActionService;
  /** Ingest listeners (absent in tests that build GraphQL without them). */
  listeners?: ListenerService;
  version: string;
}

export type GraphqlContext = {
  principal: Principal;
  services: GraphqlServices;
};
