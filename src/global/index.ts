export type { GlobalEvent, GlobalEventType, UserFields } from './events.js';
export { GlobalState, type User, type Repository, type IngestToken, type Membership, type Datasource, type ClusterNode, type SnapshotData } from './model.js';
export type { GlobalLog, LoadedLog } from './log.js';
export { EmbeddedGlobalLog, GLOBAL_LOG_FORMAT_VERSION } from './embedded-log.js';
export { GlobalStore, type Decision } from './store.js';
export { FileIndex, SHARED_SCOPE, type StoredFile, type FileEvent } from './files.js';
export { ParserIndex, type StoredParser, type ParserTestCase, type ParserEvent } from './parsers.js';
export type { AlertingEvent, AlertDefinition, AlertKind, AlertOwnership, ActionDefinition, ActionKind, ScheduleSpec } from './alerting-events.js';
export { AlertingState, MAX_THROTTLE_VALUES, type AlertRuntime, type AlertingSnapshot } from './alerting-state.js';
export { ClusterState, type ClusterEvent, type ClusterSnapshot, type MarkEntry, type MarkPosition, type PartitionEpoch, type EndedEpoch } from './cluster-state.js';
export { MemorySharedLog, type SharedGlobalLog, type GlobalProposal, type SharedLogOpened } from './shared-log.js';

export { ListenerIndex, type IngestListenerDef, type ListenerEvent, type ListenerProtocol } from './listeners.js';

export { NO_RETENTION, type RetentionSettings, type LifecycleEvent } from './lifecycle-events.js';
export { ViewIndex, type StoredView, type ViewConnection, type ViewEvent, type ViewSnapshot } from './views.js';
export { SavedQueryIndex, type StoredSavedQuery, type SavedQueryEvent } from './saved-queries.js';
export { RedactionState, MAX_REDACTIONS_PER_REPOSITORY, type RedactionTask, type RedactionEvent, type RedactionNodeResult } from './redactions.js';
export { GroupIndex, type StoredGroup, type StoredRole, type RoleAssignment, type GroupEvent, type GroupsSnapshot } from './groups.js';
export { IngestVolumeIndex, KEPT_DAYS, type IngestDay, type IngestCount, type IngestVolumeEvent } from './ingest-volume.js';
