/**
 * The data-lifecycle part of the GraphQL schema: retention and sizes of repositories, the cluster's
 * size fields, views, token rotation, and the newer alert kinds (filter alerts,
 * aggregate alerts, scheduled searches), with the product's names (what humioctl sends; see
 * docs/data-lifecycle.md for what is built behind each).
 */
/** The newer alert kinds on every search domain (the interface and each type that implements it). */
const TRIGGER_FIELDS = `  filterAlerts: [FilterAlert!]!
  filterAlert(id: String!): FilterAlert!
  aggregateAlerts: [AggregateAlert!]!
  aggregateAlert(id: String!): AggregateAlert!
  scheduledSearches: [ScheduledSearch!]!
  scheduledSearch(id: String!): ScheduledSearch!
  savedQueries: [SavedQuery!]!
  savedQuery(id: String!): SavedQuery!`;

export const LIFECYCLE_SDL = /* GraphQL */ `
extend interface SearchDomain {
${TRIGGER_FIELDS}
}

extend type Repository {
  "Days; null: no time limit."
  timeBasedRetention: Float
  "Gigabytes of ingested (uncompressed) data kept at most; null: no limit."
  ingestSizeBasedRetention: Float
  "Gigabytes of stored (compressed) data kept at most; null: no limit."
  storageSizeBasedRetention: Float
  "Bytes of this repository's segment files, each segment counted once however many nodes hold copies (the same on every node)."
  compressedByteSize: Long!
  "Bytes of this repository's events in its segments before compression (what ingest-size retention counts)."
  uncompressedByteSize: Long!
  "The ingest volume: bytes and events put in the digest queue for this repository per UTC day, newest first, the last 31 days at most, summed over the cluster's nodes (each reports every retention.interval_seconds)."
  ingestVolumeByDay: [IngestVolumeDay!]!
  "Archiving to S3 is not built: always null."
  s3ArchivingConfiguration: S3Configuration
${TRIGGER_FIELDS}
}

extend type Mutation {
  "Changes the given limits; an argument passed as null removes that limit, one left out keeps it."
  updateRetention(repositoryName: String!, timeBasedRetention: Float, ingestSizeBasedRetention: Float, storageSizeBasedRetention: Float): UpdateRetentionMutation!
  setAutomaticSearching(name: String!, automaticSearch: Boolean!): setAutomaticSearching!
  "Not built: fails saying so."
  s3EnableArchiving(repositoryName: String!): BooleanResultType!
  "Not built: fails saying so."
  s3DisableArchiving(repositoryName: String!): BooleanResultType!
  "Not built: fails saying so."
  s3ConfigureArchiving(repositoryName: String!, bucket: String!, region: String!, format: S3ArchivingFormat!, tagOrderInName: [String!], startFromDateTime: DateTime, roleArn: String): BooleanResultType!
  "Replaces an API token and returns the new one. Each user has one API token, whose id is the user's id."
  rotateToken(input: RotateTokenInputData!): String!
  "Not built (a node leaves the cluster with the cluster issue): fails saying so."
  clusterUnregisterNode(nodeID: Int!, force: Boolean!): UnregisterNodeMutation!
  createView(name: String!, description: String, connections: [ViewConnectionInput!]): View!
  updateView(viewName: String!, connections: [ViewConnectionInput!]!): View!
  createSavedQuery(input: CreateSavedQueryInput!): CreateSavedQueryPayload!
  updateSavedQuery(input: UpdateSavedQueryInput!): UpdateSavedQueryPayload!
  deleteSavedQuery(input: DeleteSavedQueryInput!): BooleanResultType!
  createFilterAlert(input: CreateFilterAlert!): FilterAlert!
  deleteFilterAlert(input: DeleteFilterAlert!): Boolean!
  createAggregateAlert(input: CreateAggregateAlert!): AggregateAlert!
  deleteAggregateAlert(input: DeleteAggregateAlert!): Boolean!
  createScheduledSearch(input: CreateScheduledSearch!): ScheduledSearch!
  createScheduledSearchV2(input: CreateScheduledSearchV2!): ScheduledSearch!
  "Replaces the scheduled search's definition; the runs already made stay made."
  updateScheduledSearch(input: UpdateScheduledSearch!): ScheduledSearch!
  updateScheduledSearchV2(input: UpdateScheduledSearchV2!): ScheduledSearch!
  deleteScheduledSearch(input: DeleteScheduledSearch!): Boolean!
}

extend type ClusterNode {
  "Age of the answering node's view of this node (0: it is this node's own, current view)."
  clusterInfoAgeSeconds: Float!
  inboundSegmentSize: Float!
  outboundSegmentSize: Float!
  canBeSafelyUnregistered: Boolean!
  currentSize: Float!
  primarySize: Float!
  secondarySize: Float!
  totalSizeOfPrimary: Float!
  totalSizeOfSecondary: Float!
  freeOnPrimary: Float!
  freeOnSecondary: Float!
  wipSize: Float!
  targetSize: Float!
  solitarySegmentSize: Float!
  zone: String
}

extend type Cluster {
  clusterInfoAgeSeconds: Float!
  underReplicatedSegmentSize: Float!
  overReplicatedSegmentSize: Float!
  missingSegmentSize: Float!
  properlyReplicatedSegmentSize: Float!
  targetUnderReplicatedSegmentSize: Float!
  targetOverReplicatedSegmentSize: Float!
  targetMissingSegmentSize: Float!
  targetProperlyReplicatedSegmentSize: Float!
}

type IngestVolumeDay {
  "The UTC day, YYYY-MM-DD."
  date: String!
  "Bytes of the records as put in the digest queue (the events as normalized: text, fields and tags)."
  ingestBytes: Long!
  eventCount: Long!
}

type UnregisterNodeMutation {
  cluster: Cluster!
}

type UpdateRetentionMutation {
  repository: SearchDomain!
}

type setAutomaticSearching {
  automaticSearch: Boolean!
}

enum S3ArchivingFormat {
  RAW
  NDJSON
}

type S3Configuration {
  bucket: String!
  region: String!
  startFrom: DateTime
  disabled: Boolean
  format: S3ArchivingFormat
  tagOrderInName: [String!]!
  roleArn: String
}

input RotateTokenInputData {
  id: String!
}

type View implements SearchDomain {
  id: String!
  name: String!
  description: String
  automaticSearch: Boolean!
  connections: [ViewConnection!]!
  files: [File!]!
  alerts: [Alert!]!
  alert(id: String!): Alert!
  actions(actionIds: [String!]): [Action!]!
  action(id: String!): Action!
${TRIGGER_FIELDS}
}

type ViewConnection {
  repository: Repository!
  filter: String!
}

input ViewConnectionInput {
  repositoryName: String!
  filter: String!
}

"A saved search; queries of its repository or view call it by name: $name(), or with parameters $name(param=value)."
type SavedQuery {
  id: String!
  name: String!
  displayName: String!
  description: String
  query: HumioQuery!
}

type HumioQuery {
  queryString: String!
  start: String!
  end: String!
  isLive: Boolean!
}

input CreateSavedQueryInput {
  name: String!
  viewName: String!
  queryString: String!
  start: String
  end: String
  isLive: Boolean
  widgetType: String
  options: String
}

input UpdateSavedQueryInput {
  id: String!
  name: String
  viewName: String!
  queryString: String
  start: String
  end: String
  isLive: Boolean
  widgetType: String
  options: String
}

input DeleteSavedQueryInput {
  id: String!
  viewName: String!
}

type CreateSavedQueryPayload {
  savedQuery: SavedQuery!
}

type UpdateSavedQueryPayload {
  savedQuery: SavedQuery!
}

enum TriggerMode {
  CompleteMode
  ImmediateMode
}

enum QueryTimestampType {
  EventTimestamp
  IngestTimestamp
}

type FilterAlert {
  id: String!
  name: String!
  description: String
  queryString: String!
  actions: [Action!]!
  labels: [String!]!
  enabled: Boolean!
  throttleTimeSeconds: Long
  throttleField: String
  lastTriggered: Long
  lastError: String
  lastWarnings: [String!]!
  queryOwnership: QueryOwnership!
}

type AggregateAlert {
  id: String!
  name: String!
  description: String
  queryString: String!
  actions: [Action!]!
  labels: [String!]!
  enabled: Boolean!
  throttleTimeSeconds: Long!
  throttleField: String
  searchIntervalSeconds: Long!
  queryTimestampType: QueryTimestampType!
  triggerMode: TriggerMode!
  lastTriggered: Long
  lastError: String
  lastWarnings: [String!]!
  queryOwnership: QueryOwnership!
}

type ScheduledSearch {
  id: String!
  name: String!
  description: String
  queryString: String!
  start: String!
  end: String!
  searchIntervalSeconds: Long!
  searchIntervalOffsetSeconds: Long
  maxWaitTimeSeconds: Long
  timeZone: String!
  schedule: String!
  backfillLimit: Int!
  backfillLimitV2: Int
  queryTimestampType: QueryTimestampType!
  enabled: Boolean!
  actions: [String!]!
  actionsV2: [Action!]!
  runAsUser: User
  "When the last run finished (epoch ms)."
  lastScheduledSearch: Long
  "The end of the last run's window: its run time (epoch ms)."
  lastExecuted: Long
  "The run time of the last run that had results (epoch ms)."
  lastTriggered: Long
  "The next run time (epoch ms): a missed run still to be made up, or the schedule's next."
  timeOfNextPlannedExecution: Long
  lastError: String
  lastWarnings: [String!]!
  labels: [String!]!
  isStarred: Boolean!
  queryOwnership: QueryOwnership!
}

input CreateFilterAlert {
  viewName: RepoOrViewName!
  name: String!
  description: String
  queryString: String!
  actionIdsOrNames: [String!]!
  labels: [String!]
  enabled: Boolean
  throttleTimeSeconds: Long
  throttleField: String
  runAsUserId: String
  queryOwnershipType: QueryOwnershipType!
}

input DeleteFilterAlert {
  viewName: RepoOrViewName!
  id: String!
}

input CreateAggregateAlert {
  viewName: RepoOrViewName!
  name: String!
  description: String
  queryString: String!
  actionIdsOrNames: [String!]!
  labels: [String!]
  enabled: Boolean
  throttleTimeSeconds: Long!
  throttleField: String
  searchIntervalSeconds: Long!
  queryTimestampType: QueryTimestampType!
  triggerMode: TriggerMode
  runAsUserId: String
  queryOwnershipType: QueryOwnershipType!
}

input DeleteAggregateAlert {
  viewName: RepoOrViewName!
  id: String!
}

input CreateScheduledSearch {
  viewName: String!
  name: String!
  description: String
  queryString: String!
  queryStart: String!
  queryEnd: String!
  schedule: String!
  timeZone: String!
  backfillLimit: Int!
  enabled: Boolean
  actions: [String!]!
  labels: [String!]
  runAsUserId: String
  queryOwnershipType: QueryOwnershipType
}

input CreateScheduledSearchV2 {
  viewName: String!
  name: String!
  description: String
  queryString: String!
  searchIntervalSeconds: Long!
  searchIntervalOffsetSeconds: Long
  maxWaitTimeSeconds: Long
  schedule: String!
  timeZone: String!
  backfillLimit: Int
  enabled: Boolean
  actionIdsOrNames: [String!]!
  labels: [String!]
  runAsUserId: String
  queryOwnershipType: QueryOwnershipType!
  queryTimestampType: QueryTimestampType!
}

input UpdateScheduledSearch {
  viewName: String!
  id: String!
  name: String!
  description: String
  queryString: String!
  queryStart: String!
  queryEnd: String!
  schedule: String!
  timeZone: String!
  backfillLimit: Int!
  enabled: Boolean!
  actions: [String!]!
  labels: [String!]!
  runAsUserId: String
  queryOwnershipType: QueryOwnershipType
}

input UpdateScheduledSearchV2 {
  viewName: String!
  id: String!
  name: String!
  description: String
  queryString: String!
  schedule: String!
  timeZone: String!
  searchIntervalSeconds: Long!
  searchIntervalOffsetSeconds: Long
  maxWaitTimeSeconds: Long
  queryTimestampType: QueryTimestampType!
  backfillLimit: Int
  enabled: Boolean!
  actionIdsOrNames: [String!]!
  labels: [String!]!
  runAsUserId: String
  queryOwnershipType: QueryOwnershipType!
}

input DeleteScheduledSearch {
  viewName: String!
  id: String!
}
`;
