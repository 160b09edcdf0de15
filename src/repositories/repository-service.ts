/**
 * Repositories, their ingest tokens and their members. A new repository comes with an ingest token
 * named "default" (clients such as vector read `ingestTokens[0].token` right after creating one).
 */
import { LogsvcError } from '../lib/errors.js';
import type { Clock } from '../lib/clock.js';
import { NO_RETENTION, type GlobalEvent, type GlobalStore, type IngestToken, type Repository, type RetentionSettings } from '../global/index.js';
import {
  canSeeRepository,
  newId,
  newIngestToken,
  requireRoot,
  requireUser,
  tokenDigest,
  requireRight,
  visibleRepository,
  type DomainRight,
  type Principal,
  type SecretBox,
} from '../auth/index.js';
import { isBuiltInParser } from '../ingest/parsers/index.js';

const REPO_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;
const TOKEN_NAME = /^[^\p{Cc}]{1,100}$/u;
const MAX_DESCRIPTION = 4096;
const MAX_TOKENS_PER_REPO = 1000;

export const DEFAULT_INGEST_TOKEN_NAME = 'default';

/** Retention values: positive and finite, or null (no limit). */
function checkRetention(r: RetentionSettings): void {
  const names = { timeDays: 'timeBasedRetention (days)', ingestGb: 'ingestSizeBasedRetention (GB)', storageGb: 'storageSizeBasedRetention (GB)' } as const;
  for (const k of ['timeDays', 'ingestGb', 'storageGb'] as const) {
    const v = r[k];
    if (v === null) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || v > 1e9) throw new LogsvcError('E_VALIDATION', `${names[k]}: must be a positive number up to 1e9, or null for no limit (got ${String(v)})`);
  }
}

export interface IngestTokenView {
  name: string;
  token: string;
  parser: string | null;
  repositoryName: string;
}

export class RepositoryService {
  constructor(
    private readonly store: GlobalStore,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {}

  list(p: Principal): Repository[] {
    return [...this.store.state.repositories.values()].filter((r) => canSeeRepository(this.store.state, p, r)).sort((a, b) => a.name.localeCompare(b.name));
  }

  get(p: Principal, name: string): Repository {
    return visibleRepository(this.store.state, p, name);
  }

  private tokenEvent(repositoryId: string, name: string, parser: string | null): GlobalEvent {
    const token = newIngestToken();
    return { type: 'IngestTokenAdded', repositoryId, name, digest: tokenDigest(token), sealed: this.box.seal(token), parser, at: this.clock.now() };
  }

  create(p: Principal, name: string, description = '', retention: RetentionSettings = NO_RETENTION): Promise<Repository> {
    requireRoot(p, 'creating a repository');
    if (typeof name !== 'string' || !REPO_NAME.test(name)) {
      throw new LogsvcError('E_VALIDATION', 'name: must be 1 to 100 letters, digits, "_", "-" or ".", starting with a letter or digit');
    }
    if (description.length > MAX_DESCRIPTION) throw new LogsvcError('E_VALIDATION', `description: at most ${MAX_DESCRIPTION} characters`);
    checkRetention(retention);
    const id = newId();
    return this.store
      .transact((s) => {
        if (s.repositoryByName(name) !== undefined) throw new LogsvcError('E_CONFLICT', `repository "${name}" already exists`);
        if (s.views.byName(name) !== undefined) throw new LogsvcError('E_CONFLICT', `a view named "${name}" already exists`);
        return {
          events: [
            { type: 'RepositoryCreated', id, name, description, at: this.clock.now() },
            this.tokenEvent(id, DEFAULT_INGEST_TOKEN_NAME, null),
            ...(retention.timeDays === null && retention.ingestGb === null && retention.storageGb === null ? [] : [{ type: 'RepositoryRetentionSet' as const, id, retention: { ...retention } }]),
          ],
          result: id,
        };
      })
      .then((rid) => this.store.state.repositories.get(rid)!);
  }

  delete(p: Principal, name: string): Promise<void> {
    requireRoot(p, 'deleting a repository');
    return this.store.transact((s) => {
      const r = s.repositoryByName(name);
      if (r === undefined) throw new LogsvcError('E_NOT_FOUND', `repository "${name}" does not exist`);
      return { events: [{ type: 'RepositoryDeleted', id: r.id }], result: undefined };
    });
  }

  setDescription(p: Principal, name: string, description: string): Promise<void> {
    if (description.length > MAX_DESCRIPTION) throw new LogsvcError('E_VALIDATION', `description: at most ${MAX_DESCRIPTION} characters`);
    return this.store.transact((s) => {
      const r = this.rightOn(s.repositoryByName(name), p, name, 'description', 'changing the description');
      return { events: [{ type: 'RepositoryDescriptionSet', id: r.id, description }], result: undefined };
    });
  }

  /**
   * Changes the retention limits given in `change` (a key present with null removes that limit;
   * a key absent leaves it). Root, or a member with deletion rights: lowering retention deletes data.
   */
  setRetention(p: Principal, name: string, change: Partial<RetentionSettings>): Promise<Repository> {
    requireUser(p, 'changing retention');
    return this.store
      .transact((s) => {
        const r = this.rightOn(s.repositoryByName(name), p, name, 'retention', 'changing the retention');
        const retention: RetentionSettings = { ...r.retention };
        for (const k of ['timeDays', 'ingestGb', 'storageGb'] as const) if (k in change) retention[k] = change[k] ?? null;
        checkRetention(retention);
        return { events: [{ type: 'RepositoryRetentionSet', id: r.id, retention }], result: r.id };
      })
      .then((rid) => this.store.state.repositories.get(rid)!);
  }

  setAutomaticSearch(p: Principal, name: string, automaticSearch: boolean): Promise<void> {
    return this.store.transact((s) => {
      const r = this.rightOn(s.repositoryByName(name), p, name, 'searchSettings', 'changing the default search settings');
      return { events: [{ type: 'RepositoryAutomaticSearchSet', id: r.id, automaticSearch }], result: undefined };
    });
  }

  /** Repository `r` (named `name`) if `p` may see it and has `right` there: else "not found", or E_FORBIDDEN naming who may. */
  private rightOn(r: Repository | undefined, p: Principal, name: string, right: Exclude<DomainRight, 'read'>, action: string): Repository {
    const state = this.store.state;
    if (r === undefined || !canSeeRepository(state, p, r)) throw new LogsvcError('E_NOT_FOUND', `repository "${name}" does not exist or you have no access to it`);
    requireRight(state, p, r, right, action);
    return r;
  }

  // --- ingest tokens -------------------------------------------------------------------------

  ingestTokens(p: Principal, repo: Repository): IngestTokenView[] {
    requireUser(p, 'listing ingest tokens');
    if (!canSeeRepository(this.store.state, p, repo)) return [];
    return [...repo.ingestTokens.values()].map((t) => this.view(repo, t));
  }

  private view(repo: Repository, t: IngestToken): IngestTokenView {
    return { name: t.name, token: this.box.open(t.sealed), parser: t.parser, repositoryName: repo.name };
  }

  /** A built-in parser, or a custom parser of the repository (src/parsers). */
  private checkParser(parser: string | null | undefined, repositoryName: string): string | null {
    if (parser === undefined || parser === null || parser === '') return null;
    if (isBuiltInParser(parser)) return parser;
    const repo = this.store.state.repositoryByName(repositoryName);
    if (repo !== undefined && this.store.state.parsers.byName(repo.id, parser) !== undefined) return parser;
    throw new LogsvcError('E_VALIDATION', `parser: "${parser}" does not exist`);
  }

  addIngestToken(p: Principal, repositoryName: string, name: string, parser?: string | null): Promise<IngestTokenView> {
    requireUser(p, 'adding an ingest token');
    if (typeof name !== 'string' || !TOKEN_NAME.test(name)) throw new LogsvcError('E_VALIDATION', 'name: must be 1 to 100 characters without control characters');
    const parserName = this.checkParser(parser, repositoryName);
    return this.store
      .transact((s) => {
        const r = this.rightOn(s.repositoryByName(repositoryName), p, repositoryName, 'ingestTokens', 'adding an ingest token');
        if (r.ingestTokens.has(name)) throw new LogsvcError('E_CONFLICT', `ingest token "${name}" already exists in repository "${repositoryName}"`);
        if (r.ingestTokens.size >= MAX_TOKENS_PER_REPO) throw new LogsvcError('E_CONFLICT', `repository "${repositoryName}" already has ${MAX_TOKENS_PER_REPO} ingest tokens`);
        return { events: [this.tokenEvent(r.id, name, parserName)], result: r.id };
      })
      .then((rid) => {
        const r = this.store.state.repositories.get(rid)!;
        return this.view(r, r.ingestTokens.get(name)!);
      });
  }

  removeIngestToken(p: Principal, repositoryName: string, name: string): Promise<void> {
    requireUser(p, 'removing an ingest token');
    return this.store.transact((s) => {
      const r = this.rightOn(s.repositoryByName(repositoryName), p, repositoryName, 'ingestTokens', 'removing an ingest token');
      if (!r.ingestTokens.has(name)) throw new LogsvcError('E_NOT_FOUND', `ingest token "${name}" does not exist in repository "${repositoryName}"`);
      return { events: [{ type: 'IngestTokenRemoved', repositoryId: r.id, name }], result: undefined };
    });
  }

  assignParser(p: Principal, repositoryName: string, tokenName: string, parser: string | null): Promise<IngestTokenView> {
    requireUser(p, 'assigning a parser');
    const parserName = this.checkParser(parser, repositoryName);
    return this.store
      .transact((s) => {
        const r = this.rightOn(s.repositoryByName(repositoryName), p, repositoryName, 'ingestTokens', 'assigning a parser to an ingest token');
        if (!r.ingestTokens.has(tokenName)) throw new LogsvcError('E_NOT_FOUND', `ingest token "${tokenName}" does not exist in repository "${repositoryName}"`);
        return { events: [{ type: 'IngestTokenParserSet', repositoryId: r.id, name: tokenName, parser: parserName }], result: r.id };
      })
      .then((rid) => {
        const r = this.store.state.repositories.get(rid)!;
        return this.view(r, r.ingestTokens.get(tokenName)!);
      });
  }

  // --- members -------------------------------------------------------------------------------

  setMember(p: Principal, repositoryName: string, username: string, rights: { canAdminMembers: boolean; canDeleteData: boolean }): Promise<void> {
    requireUser(p, 'adding a member');
    return this.store.transact((s) => {
      const r = this.rightOn(s.repositoryByName(repositoryName), p, repositoryName, 'admin', 'adding a member');
      const u = s.userByName(username);
      if (u === undefined) throw new LogsvcError('E_NOT_FOUND', `user "${username}" does not exist`);
      return { events: [{ type: 'MemberSet', repositoryId: r.id, userId: u.id, ...rights }], result: undefined };
    });
  }

  removeMember(p: Principal, repositoryName: string, username: string): Promise<void> {
    requireUser(p, 'removing a member');
    return this.store.transact((s) => {
      const r = this.rightOn(s.repositoryByName(repositoryName), p, repositoryName, 'admin', 'removing a member');
      const u = s.userByName(username);
      if (u === undefined || !r.members.has(u.id)) throw new LogsvcError('E_NOT_FOUND', `user "${username}" is not a member of repository "${repositoryName}"`);
      return { events: [{ type: 'MemberRemoved', repositoryId: r.id, userId: u.id }], result: undefined };
    });
  }
}

