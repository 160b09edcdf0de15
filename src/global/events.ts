/**
 * The global events: every change to cluster-wide state is one of these, appended to the global log
 * and applied in order. Events carry every value they need (ids, timestamps, digests) so that applying
 * them is deterministic on every node and on every replay. Never change the meaning of an existing
 * event type; add a new one.
 */

import type { FileEvent } from './files.js';
import type { ParserEvent } from './parsers.js';
import type { AlertingEvent } from './alerting-events.js';
import type { ClusterEvent } from './cluster-state.js';
import type { ListenerEvent } from './listeners.js';
import type { LifecycleEvent } from './lifecycle-events.js';
import type { ViewEvent } from './views.js';
import type { SavedQueryEvent } from './saved-queries.js';
import type { RedactionEvent } from './redactions.js';
import type { GroupEvent } from './groups.js';
import type { IngestVolumeEvent } from './ingest-volume.js';

export interface UserFields {
  fullName?: string | undefined;
  email?: string | undefined;
  company?: string | undefined;
  countryCode?: string | undefined;
  picture?: string | undefined;
}

export type GlobalEvent =
  | ({ type: 'UserAdded'; id: string; username: string; isRoot: boolean; at: number } & UserFields)
  | { type: 'UserUpdated'; id: string; isRoot?: boolean | undefined; fields: UserFields }
  | { type: 'UserRemoved'; id: string }
  | { type: 'UserApiTokenSet'; userId: string; digest: string; at: number }
  | { type: 'RepositoryCreated'; id: string; name: string; description: string; at: number }
  | { type: 'RepositoryDescriptionSet'; id: string; description: string }
  | { type: 'RepositoryDeleted'; id: string }
  | { type: 'IngestTokenAdded'; repositoryId: string; name: string; digest: string; sealed: string; parser: string | null; at: number }
  | { type: 'IngestTokenRemoved'; repositoryId: string; name: string }
  | { type: 'IngestTokenParserSet'; repositoryId: string; name: string; parser: string | null }
  | { type: 'MemberSet'; repositoryId: string; userId: string; canAdminMembers: boolean; canDeleteData: boolean }
  | { type: 'MemberRemoved'; repositoryId: string; userId: string }
  | { type: 'DatasourceCreated'; repositoryId: string; id: string; tags: Record<string, string>; at: number }
  | { type: 'NodeRegistered'; id: number; uuid: string; name: string; uri: string; at: number }
  /** A node being removed: its segments are copied to other nodes first (replication.md). */
  | { type: 'NodeDrainingSet'; id: number; at: number }
  /** clusterUnregisterNode: the node leaves the node list, every partition's hosts and every segment's holders. */
  | { type: 'NodeUnregistered'; id: number; at: number }
  | { type: 'PartitionLayoutSet'; partitions: number[][] }
  | FileEvent
  | ParserEvent
  | AlertingEvent
  | ClusterEvent
  | ListenerEvent
  | LifecycleEvent
  | ViewEvent
  | SavedQueryEvent
  | RedactionEvent
  | GroupEvent
  | IngestVolumeEvent;

export type GlobalEventType = GlobalEvent['type'];
