/**
 * AlertService: a repository's alerts, for REST and GraphQL alike. It validates definitions
 * (alert-input.ts), decides ownership (whose access the alert's query runs with), enforces unique
 * names and the per-repository bound, and reads each alert's runtime state for the API. Alerts are
 * found by id or, as humioctl sends them, by name.
 */
import { LogsvcError } from '../lib/errors.js';
import type { Clock } from '../lib/clock.js';
import type { AlertDefinition, AlertKind, AlertOwnership, AlertRuntime, GlobalState, GlobalStore } from '../global/index.js';
import { isRoot, newId, userMayRead, type Principal } from '../auth/index.js';
import { memberDomain, type AlertDomain } from './access.js';
import { parseRelative } from '../query/time.js';
import { checkAlert, type AlertInput, type FieldNames } from './alert-input.js';
import { MAX_QUERY_CHARS } from './limits.js';

export interface AlertView {
  alert: AlertDefinition;
  repositoryName: string;
  lastTriggeredAt: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
  /** Scheduled searches: the run time (window end) of the last run, and when it finished. */
  lastExecutedAt: number | null;
  lastRunFinishedAt: number | null;
}

export interface AlertServiceOptions {
  maxPerRepository: number;
  /**
   * Prepares the alert's query over `domain`, a repository or a view (loading the lookup files its match()/lookup() calls
   * name, which is asynchronous) and returns the check that compiles it, throwing an E_QUERY error
   * when it does not compile.
   */
  prepareQuery: (queryString: string, queryStart: string, domain: AlertDomain) => Promise<() => void>;
}

const NO_RUNTIME: Pick<AlertRuntime, 'lastTriggeredAt' | 'lastError' | 'lastErrorAt' | 'lastExecutedAt' | 'lastRunFinishedAt'> = {
  lastTriggeredAt: null,
  lastError: null,
  lastErrorAt: null,
  lastExecutedAt: null,
  lastRunFinishedAt: null,
};

export class AlertService {
  constructor(
    private readonly store: GlobalStore,
    private readonly clock: Clock,
    private readonly opts: AlertServiceOptions,
  ) {}

  private view(a: AlertDefinition, repositoryName: string): AlertView {
    const rt = this.store.state.alerting.runtime.get(a.id) ?? NO_RUNTIME;
    return {
      alert: a,
      repositoryName,
      lastTriggeredAt: rt.lastTriggeredAt,
      lastError: rt.lastError,
      lastErrorAt: rt.lastErrorAt,
      lastExecutedAt: rt.lastExecutedAt ?? null,
      lastRunFinishedAt: rt.lastRunFinishedAt ?? null,
    };
  }

  list(p: Principal, repositoryName: string, kind?: AlertKind): AlertView[] {
    const repo = memberDomain(this.store.state, p, repositoryName, 'listing alerts');
    return ofKind(this.store.state, repo, kind)
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((a) => this.view(a, repo.name));
  }

  get(p: Principal, repositoryName: string, idOrName: string, kind?: AlertKind): AlertView {
    const repo = memberDomain(this.store.state, p, repositoryName, 'reading an alert');
    return this.view(find(this.store.state, repo, idOrName, kind), repo.name);
  }

  /**
   * The query check for `input`, prepared before the transaction (a transaction is synchronous,
   * loading lookup files is not). A failure to prepare is thrown by the check, so that checkAlert
   * reports problems in field order and names the query field.
   */
  private async queryCheck(p: Principal, repositoryName: string, input: AlertInput, operation: string, change: 'create:Triggers' | 'update:Triggers'): Promise<() => void> {
    const repo = memberDomain(this.store.state, p, repositoryName, operation, change);
    const { queryString, queryStart } = input;
    // Anything checkAlert refuses before compiling is not worth preparing.
    if (typeof queryString !== 'string' || queryString.length > MAX_QUERY_CHARS || typeof queryStart !== 'string' || parseRelative(queryStart) === null) return () => undefined;
    try {
      return await this.opts.prepareQuery(queryString, queryStart.trim(), repo);
    } catch (err) {
      return () => {
        throw err;
      };
    }
  }

  async create(p: Principal, repositoryName: string, input: AlertInput, names: FieldNames, kind?: KindParts): Promise<AlertView> {
    const id = newId();
    const validateQuery = await this.queryCheck(p, repositoryName, input, 'creating an alert', 'create:Triggers');
    return this.store
      .transact((s) => {
        const repo = memberDomain(s, p, repositoryName, 'creating an alert', 'create:Triggers');
        const checked = checkAlert(input, { names, repositoryName: repo.name, actions: s.alerting.actionsOf(repo.id), validateQuery });
        const existing = ofKind(s, repo, kind?.kind);
        if (existing.some((a) => a.name === checked.name)) throw new LogsvcError('E_CONFLICT', `${names.name}: an alert named "${checked.name}" already exists in ${repo.kind} "${repo.name}"`);
        if (existing.length >= this.opts.maxPerRepository) {
          throw new LogsvcError('E_CONFLICT', `${repo.kind} "${repo.name}" already has ${existing.length} alerts, the most allowed (alerts.max_alerts_per_repository)`);
        }
        const ownership = decideOwnership(s, p, input, names) ?? defaultOwnership(p);
        const createdAt = this.clock.now();
        const alert: AlertDefinition = { id, repositoryId: repo.id, ...checked, ownership, createdAt, ...withActiveSince(kind, createdAt) };
        return { events: [{ type: 'AlertSaved', alert }], result: repo.name };
      })
      .then((repoName) => this.view(this.store.state.alerting.alerts.get(id)!, repoName));
  }

  /** Replaces alert `idOrName` of `kind` (absent: a legacy alert) with `input`. */
  async update(p: Principal, repositoryName: string, idOrName: string, input: AlertInput, names: FieldNames, kind?: KindParts): Promise<AlertView> {
    const validateQuery = await this.queryCheck(p, repositoryName, input, 'updating an alert', 'update:Triggers');
    return this.store
      .transact((s) => {
        const repo = memberDomain(s, p, repositoryName, 'updating an alert', 'update:Triggers');
        const old = find(s, repo, idOrName, kind?.kind);
        const checked = checkAlert(input, { names, repositoryName: repo.name, actions: s.alerting.actionsOf(repo.id), validateQuery });
        if (ofKind(s, repo, kind?.kind).some((a) => a.name === checked.name && a.id !== old.id)) {
          throw new LogsvcError('E_CONFLICT', `${names.name}: an alert named "${checked.name}" already exists in ${repo.kind} "${repo.name}"`);
        }
        // An owner who may no longer run the query is replaced by whoever updates the alert (the
        // advice the alert's lastError gives).
        const ownership = decideOwnership(s, p, input, names) ?? (ownerCanRun(s, old.ownership, repo) ? old.ownership : defaultOwnership(p));
        // A scheduled search makes up no runs from before it was (re-)enabled.
        const since = old.silenced && !checked.silenced ? this.clock.now() : (old.schedule?.activeSince ?? old.createdAt);
        const alert: AlertDefinition = { ...old, ...checked, ownership, ...withActiveSince(kind, since) };
        return { events: [{ type: 'AlertSaved', alert }], result: { id: old.id, repoName: repo.name } };
      })
      .then(({ id, repoName }) => this.view(this.store.state.alerting.alerts.get(id)!, repoName));
  }

  delete(p: Principal, repositoryName: string, idOrName: string, kind?: AlertKind): Promise<void> {
    return this.store.transact((s) => {
      const repo = memberDomain(s, p, repositoryName, 'deleting an alert', 'delete:Triggers');
      const a = find(s, repo, idOrName, kind);
      return { events: [{ type: 'AlertDeleted', id: a.id }], result: undefined };
    });
  }
}

/** What a kind of alert adds to the definition. */
export interface KindParts {
  kind: AlertKind;
  triggerMode?: AlertDefinition['triggerMode'];
  ingestTime?: boolean;
  schedule?: AlertDefinition['schedule'];
}

function withActiveSince(kind: KindParts | undefined, since: number): Partial<AlertDefinition> {
  if (kind === undefined) return {};
  return kind.schedule === undefined ? kind : { ...kind, schedule: { ...kind.schedule, activeSince: since } };
}

/** The repository's alerts of one kind (undefined: legacy alerts). */
function ofKind(s: GlobalState, repo: AlertDomain, kind: AlertKind | undefined): AlertDefinition[] {
  return s.alerting.alertsOf(repo.id).filter((a) => a.kind === kind);
}

const KIND_NAME = { filter: 'filter alert', aggregate: 'aggregate alert', scheduled: 'scheduled search' } as const;

/** By id; otherwise by name (humioctl deletes by name), when exactly one alert of the kind has it. */
function find(s: GlobalState, repo: AlertDomain, idOrName: string, kind: AlertKind | undefined): AlertDefinition {
  const what = kind === undefined ? 'alert' : KIND_NAME[kind];
  const byId = s.alerting.alerts.get(idOrName);
  if (byId !== undefined && byId.repositoryId === repo.id && byId.kind === kind) return byId;
  const named = ofKind(s, repo, kind).filter((a) => a.name === idOrName);
  if (named.length === 1) return named[0]!;
  if (named.length > 1) throw new LogsvcError('E_CONFLICT', `${named.length} ${what}s in ${repo.kind} "${repo.name}" are named "${idOrName}"; use the id`);
  throw new LogsvcError('E_NOT_FOUND', `${what} "${idOrName.slice(0, 200)}" does not exist in ${repo.kind} "${repo.name}"`);
}

/** Whether a user-owned alert's owner still exists and may read the repository. */
function ownerCanRun(s: GlobalState, o: AlertOwnership, repo: AlertDomain): boolean {
  if (o.kind !== 'user') return true;
  return userMayRead(s, o.userId, repo.access);
}

function defaultOwnership(p: Principal): AlertOwnership {
  return p.kind === 'user' ? { kind: 'user', userId: p.userId } : { kind: 'organization' };
}

/**
 * Ownership from `queryOwnershipType` / `runAsUserId`; undefined when the input names neither.
 * Running as another user, or on behalf of the organization (no user whose access is checked),
 * needs root.
 */
function decideOwnership(s: GlobalState, p: Principal, input: AlertInput, names: FieldNames): AlertOwnership | undefined {
  const type = input.ownershipType;
  const runAs = input.runAsUserId;
  if ((type === undefined || type === null) && (runAs === undefined || runAs === null)) return undefined;
  if (type !== undefined && type !== null && type !== 'User' && type !== 'Organization') throw new LogsvcError('E_VALIDATION', `${names.ownershipType}: must be User or Organization`);
  if (runAs !== undefined && runAs !== null && typeof runAs !== 'string') throw new LogsvcError('E_VALIDATION', `${names.runAsUserId}: must be a user id`);
  if (type === 'Organization') {
    if (!isRoot(p)) throw new LogsvcError('E_FORBIDDEN', `${names.ownershipType}: an alert owned by the organization can only be created by root`);
    return { kind: 'organization' };
  }
  const userId = typeof runAs === 'string' ? runAs : p.kind === 'user' ? p.userId : undefined;
  if (userId === undefined) throw new LogsvcError('E_VALIDATION', `${names.runAsUserId}: required when the local admin token creates a user-owned alert`);
  if (!s.users.has(userId)) throw new LogsvcError('E_VALIDATION', `${names.runAsUserId}: user "${userId.slice(0, 100)}" does not exist`);
  if (!(p.kind === 'user' && p.userId === userId) && !isRoot(p)) throw new LogsvcError('E_FORBIDDEN', `${names.runAsUserId}: running an alert as another user requires root`);
  return { kind: 'user', userId };
}
