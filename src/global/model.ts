/**
 * The in-memory global state and the pure function that applies one global event to it. Lookup
 * indexes (token digest -> owner, name -> repository) are maintained here so that readers never scan.
 */
import type { GlobalEvent, UserFields } from './events.js';
import { FileIndex, type StoredFile } from './files.js';
import { ParserIndex, type StoredParser } from './parsers.js';
import { AlertingState, type AlertingSnapshot } from './alerting-state.js';
import { ClusterState, type ClusterSnapshot } from './cluster-state.js';
import { ListenerIndex, type IngestListenerDef } from './listeners.js';
import { NO_RETENTION, type RetentionSettings } from './lifecycle-events.js';
import { ViewIndex, type ViewSnapshot } from './views.js';
import { SavedQueryIndex, type StoredSavedQuery } from './saved-queries.js';
import { RedactionState, type RedactionSnapshot } from './redactions.js';
import { GroupIndex, type GroupsSnapshot } from './groups.js';
import { IngestVolumeIndex, type IngestVolumeSnapshot } from './ingest-volume.js';

export interface User extends UserFields {
  id: string;
  username: string;
  isRoot: boolean;
  createdAt: number;
  apiTokenDigest: string | null;
}

export interface IngestToken {
  repositoryId: string;
  name: string;
  digest: string;
  /** The token value sealed with the node's state key (see auth/secret-box). */
  sealed: string;
  parser: string | null;
  createdAt: number;
}

export interface Membership {
  userId: string;
  canAdminMembers: boolean;
  canDeleteData: boolean;
}

export interface Datasource {
  id: string;
  /** Tag names without "#", including the built-in "type" when set. */
  tags: Record<string, string>;
  createdAt: number;
}

export interface Repository {
  id: string;
  name: string;
  description: string;
  createdAt: number;
  ingestTokens: Map<string, IngestToken>;
  members: Map<string, Membership>;
  datasources: Map<string, Datasource>;
  retention: RetentionSettings;
  automaticSearch: boolean;
  /**
   * Retention decided in global state (RetentionBoundRaised): every holder deletes this
   * repository's segments whose newest event is older than this (epoch ms); null: none yet.
   */
  retentionBound: number | null;
}

export interface ClusterNode {
  id: number;
  uuid: string;
  name: string;
  uri: string;
  registeredAt: number;
}

export class GlobalState {
  /** Sequence number of the last applied event (0: none). */
  seq = 0;
  /**
   * Decisions applied (transactions that were decided against the state, as opposed to reports such
   * as digest progress). In a cluster a proposed transaction applies only if no other decision was
   * applied since the state it was decided on (GlobalStore, shared mode).
   */
  decisions = 0;
  /** Digest epochs, progress and segment holdings of a cluster. */
  readonly cluster = new ClusterState();
  readonly users = new Map<string, User>();
  readonly usersByName = new Map<string, string>();
  readonly usersByTokenDigest = new Map<string, string>();
  readonly repositories = new Map<string, Repository>();
  readonly repositoriesByName = new Map<string, string>();
  readonly ingestTokensByDigest = new Map<string, { repositoryId: string; name: string }>();
  readonly nodes = new Map<number, ClusterNode>();
  /** Nodes being drained before their removal (clusterUnregisterNode). */
  readonly draining = new Set<number>();
  /** partitions[i] = node ids that may digest partition i, in priority order. */
  partitions: number[][] = [];
  /** Uploaded lookup files (repository and shared scopes). */
  files = new FileIndex();
  /** Custom parsers per repository. */
  parsers = new ParserIndex();
  /** Alerts, actions and the alert scheduler's durable runtime state. */
  readonly alerting = new AlertingState();
  /** Ingest listeners (syslog over TCP/UDP). */
  listeners = new ListenerIndex();
  /** Views: search domains over repositories with a filter per connection. */
  views = new ViewIndex();
  /** Saved searches of repositories and views. */
  savedQueries = new SavedQueryIndex();
  /** Event redaction tasks (redactEvents). */
  readonly redactions = new RedactionState();
  /** Groups of users, roles, and the roles groups have on repositories and views. */
  groups = new GroupIndex();
  /** Bytes and events ingested per repository and UTC day, over the cluster's nodes. */
  ingestVolume = new IngestVolumeIndex();

  userByName(username: string): User | undefined {
    const id = this.usersByName.get(username);
    return id === undefined ? undefined : this.users.get(id);
  }

  repositoryByName(name: string): Repository | undefined {
    const id = this.repositoriesByName.get(name);
    return id === undefined ? undefined : this.repositories.get(id);
  }

  apply(e: GlobalEvent, seq: number): void {
    this.seq = seq;
    switch (e.type) {
      case 'UserAdded': {
        const { type: _t, id, username, isRoot, at, ...fields } = e;
        this.users.set(id, { id, username, isRoot, createdAt: at, apiTokenDigest: null, ...fields });
        this.usersByName.set(username, id);
        return;
      }
      case 'UserUpdated': {
        const u = this.users.get(e.id);
        if (u === undefined) return;
        Object.assign(u, e.fields);
        if (e.isRoot !== undefined) u.isRoot = e.isRoot;
        return;
      }
      case 'UserRemoved': {
        const u = this.users.get(e.id);
        if (u === undefined) return;
        this.users.delete(e.id);
        this.usersByName.delete(u.username);
        if (u.apiTokenDigest !== null) this.usersByTokenDigest.delete(u.apiTokenDigest);
        for (const r of this.repositories.values()) r.members.delete(e.id);
        this.views.dropUser(e.id);
        this.groups.dropUser(e.id);
        return;
      }
      case 'UserApiTokenSet': {
        const u = this.users.get(e.userId);
        if (u === undefined) return;
        if (u.apiTokenDigest !== null) this.usersByTokenDigest.delete(u.apiTokenDigest);
        u.apiTokenDigest = e.digest;
        this.usersByTokenDigest.set(e.digest, u.id);
        return;
      }
      case 'RepositoryCreated':
        this.repositories.set(e.id, {
          id: e.id,
          name: e.name,
          description: e.description,
          createdAt: e.at,
          ingestTokens: new Map(),
          members: new Map(),
          datasources: new Map(),
          retention: NO_RETENTION,
          automaticSearch: true,
          retentionBound: null,
        });
        this.repositoriesByName.set(e.name, e.id);
        return;
      case 'RepositoryDescriptionSet': {
        const r = this.repositories.get(e.id);
        if (r !== undefined) r.description = e.description;
        return;
      }
      case 'RepositoryDeleted': {
        const r = this.repositories.get(e.id);
        if (r === undefined) return;
        for (const t of r.ingestTokens.values()) this.ingestTokensByDigest.delete(t.digest);
        this.repositories.delete(e.id);
        this.repositoriesByName.delete(r.name);
        this.files.dropScope(e.id);
        this.parsers.dropRepository(e.id);
        this.alerting.dropRepository(e.id);
        this.listeners.dropRepository(e.id);
        this.views.dropRepository(e.id);
        this.savedQueries.dropDomain(e.id);
        this.redactions.dropRepository(e.id);
        this.groups.dropDomain(e.id);
        this.ingestVolume.dropRepository(e.id);
        return;
      }
      case 'IngestTokenAdded': {
        const r = this.repositories.get(e.repositoryId);
        if (r === undefined) return;
        r.ingestTokens.set(e.name, {
          repositoryId: e.repositoryId,
          name: e.name,
          digest: e.digest,
          sealed: e.sealed,
          parser: e.parser,
          createdAt: e.at,
        });
        this.ingestTokensByDigest.set(e.digest, { repositoryId: e.repositoryId, name: e.name });
        return;
      }
      case 'IngestTokenRemoved': {
        const r = this.repositories.get(e.repositoryId);
        const t = r?.ingestTokens.get(e.name);
        if (r === undefined || t === undefined) return;
        r.ingestTokens.delete(e.name);
        this.ingestTokensByDigest.delete(t.digest);
        return;
      }
      case 'IngestTokenParserSet': {
        const t = this.repositories.get(e.repositoryId)?.ingestTokens.get(e.name);
        if (t !== undefined) t.parser = e.parser;
        return;
      }
      case 'MemberSet': {
        const r = this.repositories.get(e.repositoryId);
        if (r === undefined || !this.users.has(e.userId)) return;
        r.members.set(e.userId, { userId: e.userId, canAdminMembers: e.canAdminMembers, canDeleteData: e.canDeleteData });
        return;
      }
      case 'MemberRemoved':
        this.repositories.get(e.repositoryId)?.members.delete(e.userId);
        return;
      case 'DatasourceCreated': {
        const r = this.repositories.get(e.repositoryId);
        if (r !== undefined) r.datasources.set(e.id, { id: e.id, tags: e.tags, createdAt: e.at });
        return;
      }
      case 'NodeRegistered':
        this.nodes.set(e.id, { id: e.id, uuid: e.uuid, name: e.name, uri: e.uri, registeredAt: e.at });
        return;
      case 'PartitionLayoutSet':
        this.partitions = e.partitions.map((hosts) => [...hosts]);
        return;
      case 'NodeDrainingSet':
        this.draining.add(e.id);
        return;
      case 'NodeUnregistered':
        this.nodes.delete(e.id);
        this.draining.delete(e.id);
        this.partitions = this.partitions.map((hosts) => hosts.filter((h) => h !== e.id));
        this.cluster.segments.dropNode(e.id, seq);
        return;
      case 'FileStored':
      case 'FileRemoved':
        this.files.apply(e);
        return;
      case 'ParserSaved':
      case 'ParserDeleted':
        this.parsers.apply(e);
        return;
      case 'AlertSaved':
      case 'AlertDeleted':
      case 'ActionSaved':
      case 'ActionDeleted':
      case 'AlertTriggered':
      case 'AlertErrorSet':
      case 'AlertNodeSet':
      case 'AlertTriggerUndone':
      case 'ScheduledSearchExecuted':
        this.alerting.apply(e);
        return;
      case 'SegmentStored':
        // A node that was unregistered holds nothing (it may still be running for a while).
        if (this.nodes.has(e.node)) this.cluster.apply(e, seq);
        return;
      case 'ClusterCreated':
      case 'PartitionEpochStarted':
      case 'PartitionProgress':
      case 'RepositoryHeld':
      case 'SegmentDropped':
        this.cluster.apply(e, seq);
        return;
      case 'IngestListenerSaved':
      case 'IngestListenerDeleted':
        this.listeners.apply(e);
        return;
      case 'SavedQuerySaved':
      case 'SavedQueryDeleted':
        this.savedQueries.apply(e);
        return;
      case 'ViewDeleted':
        this.views.apply(e);
        this.savedQueries.dropDomain(e.id);
        this.groups.dropDomain(e.id);
        this.alerting.dropRepository(e.id);
        return;
      case 'ViewSaved':
      case 'ViewMemberSet':
      case 'ViewMemberRemoved':
        this.views.apply(e);
        return;
      case 'RepositoryRetentionSet': {
        const r = this.repositories.get(e.id);
        if (r !== undefined) r.retention = { ...e.retention };
        return;
      }
      case 'RepositoryAutomaticSearchSet': {
        const r = this.repositories.get(e.id);
        if (r !== undefined) r.automaticSearch = e.automaticSearch;
        return;
      }
      case 'RedactionRequested':
      case 'RedactionNodeDone':
      case 'RedactionCancelled':
        this.redactions.apply(e);
        return;
      case 'GroupSaved':
      case 'GroupDeleted':
      case 'GroupUsersAdded':
      case 'GroupUsersRemoved':
      case 'RoleSaved':
      case 'RoleDeleted':
      case 'GroupRoleAssigned':
      case 'GroupRoleUnassigned':
        this.groups.apply(e);
        return;
      case 'RepositoryIngestCounted':
        // Counts of a deleted repository (still in flight when it went) are not kept.
        this.ingestVolume.apply({ ...e, counts: e.counts.filter((c) => this.repositories.has(c.repositoryId)) });
        return;
      case 'RetentionBoundRaised': {
        // Only ever raised: proposals from several nodes settle on the highest, in any order.
        const r = this.repositories.get(e.id);
        if (r !== undefined && (r.retentionBound === null || e.before > r.retentionBound)) r.retentionBound = e.before;
        return;
      }
      default: {
        const never: never = e;
        throw new Error(`unknown global event ${JSON.stringify(never)}`);
      }
    }
  }

  /** The whole state as plain data, for snapshots. */
  toSnapshot(): SnapshotData {
    return {
      seq: this.seq,
      decisions: this.decisions,
      cluster: this.cluster.toSnapshot(),
      users: [...this.users.values()],
      repositories: [...this.repositories.values()].map((r) => ({
        id: r.id,
        name: r.name,
        description: r.description,
        createdAt: r.createdAt,
        ingestTokens: [...r.ingestTokens.values()],
        members: [...r.members.values()],
        datasources: [...r.datasources.values()],
        retention: r.retention,
        automaticSearch: r.automaticSearch,
        ...(r.retentionBound === null ? {} : { retentionBound: r.retentionBound }),
      })),
      nodes: [...this.nodes.values()],
      ...(this.draining.size === 0 ? {} : { draining: [...this.draining] }),
      partitions: this.partitions,
      files: this.files.all(),
      parsers: this.parsers.all(),
      alerting: this.alerting.toSnapshot(),
      listeners: this.listeners.all(),
      views: this.views.toSnapshot(),
      savedQueries: this.savedQueries.all(),
      ...(this.redactions.tasks.size === 0 ? {} : { redactions: this.redactions.toSnapshot() }),
      ...(this.groups.groups.size === 0 && this.groups.roles.size === 0 ? {} : { groups: this.groups.toSnapshot() }),
      ...(this.ingestVolume.isEmpty ? {} : { ingestVolume: this.ingestVolume.toSnapshot() }),
    };
  }

  static fromSnapshot(s: SnapshotData): GlobalState {
    const g = new GlobalState();
    g.seq = s.seq;
    g.decisions = s.decisions ?? 0;
    if (s.cluster !== undefined) g.cluster.loadSnapshot(s.cluster);
    for (const u of s.users) {
      g.users.set(u.id, { ...u });
      g.usersByName.set(u.username, u.id);
      if (u.apiTokenDigest !== null) g.usersByTokenDigest.set(u.apiTokenDigest, u.id);
    }
    for (const r of s.repositories) {
      g.repositories.set(r.id, {
        id: r.id,
        name: r.name,
        description: r.description,
        createdAt: r.createdAt,
        ingestTokens: new Map(r.ingestTokens.map((t) => [t.name, { ...t }])),
        members: new Map(r.members.map((m) => [m.userId, { ...m }])),
        datasources: new Map((r.datasources ?? []).map((d) => [d.id, { ...d }])),
        retention: { ...(r.retention ?? NO_RETENTION) },
        automaticSearch: r.automaticSearch ?? true,
        retentionBound: r.retentionBound ?? null,
      });
      g.repositoriesByName.set(r.name, r.id);
      for (const t of r.ingestTokens) g.ingestTokensByDigest.set(t.digest, { repositoryId: r.id, name: t.name });
    }
    for (const n of s.nodes) g.nodes.set(n.id, { ...n });
    for (const id of s.draining ?? []) g.draining.add(id);
    g.partitions = s.partitions.map((h) => [...h]);
    g.files = FileIndex.fromSnapshot(s.files);
    g.parsers = ParserIndex.fromSnapshot(s.parsers);
    if (s.alerting !== undefined) g.alerting.loadSnapshot(s.alerting);
    g.listeners = ListenerIndex.fromSnapshot(s.listeners);
    g.views = ViewIndex.fromSnapshot(s.views);
    g.savedQueries = SavedQueryIndex.fromSnapshot(s.savedQueries);
    g.redactions.loadSnapshot(s.redactions);
    g.groups = GroupIndex.fromSnapshot(s.groups);
    g.ingestVolume = IngestVolumeIndex.fromSnapshot(s.ingestVolume);
    return g;
  }
}

export interface SnapshotData {
  seq: number;
  /** Absent in snapshots written before clusters existed. */
  decisions?: number;
  cluster?: ClusterSnapshot;
  users: User[];
  repositories: {
    id: string;
    name: string;
    description: string;
    createdAt: number;
    ingestTokens: IngestToken[];
    members: Membership[];
    /** Absent in snapshots written before datasources were tracked. */
    datasources?: Datasource[];
    /** Absent in snapshots written before retention existed. */
    retention?: RetentionSettings;
    automaticSearch?: boolean;
    retentionBound?: number;
  }[];
  nodes: ClusterNode[];
  /** Absent when no node is being drained. */
  draining?: number[];
  partitions: number[][];
  /** Absent in snapshots written before lookup files existed. */
  files?: StoredFile[];
  /** Absent in snapshots written before custom parsers existed. */
  parsers?: StoredParser[];
  /** Absent in snapshots written before alerting existed. */
  alerting?: AlertingSnapshot;
  /** Absent in snapshots written before ingest listeners existed. */
  listeners?: IngestListenerDef[];
  /** Absent in snapshots written before views existed. */
  views?: ViewSnapshot[];
  /** Absent in snapshots written before saved searches existed. */
  savedQueries?: StoredSavedQuery[];
  /** Absent when there are no redaction tasks. */
  redactions?: RedactionSnapshot;
  /** Absent when there are no groups and no roles. */
  groups?: GroupsSnapshot;
  /** Absent when nothing was counted (and in snapshots written before ingest volume was). */
  ingestVolume?: IngestVolumeSnapshot;
}
