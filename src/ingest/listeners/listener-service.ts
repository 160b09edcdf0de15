/**
 * Ingest listener definitions (createIngestListenerV3, updateIngestListenerV3,
 * deleteIngestListener, Repository.ingestListeners): validated here, stored as global events. Only
 * root may manage them (the product asks for the Manage Cluster permission). The sockets
 * themselves are ListenerManager's.
 */
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { LogsvcError } from '../../lib/errors.js';
import type { Clock } from '../../lib/clock.js';
import { requireRoot, visibleRepository, type Principal } from '../../auth/index.js';
import type { GlobalStore, IngestListenerDef, ListenerProtocol, Repository } from '../../global/index.js';
import { isBuiltInParser } from '../parsers/index.js';

export interface ListenerInput {
  repositoryName: string;
  name: string;
  protocol: string;
  port: number;
  bindInterface?: string | null;
  /** A parser's name (or id, for a custom parser); `syslog` when absent. */
  parser?: string | null;
  charset?: string | null;
  vHost?: number | null;
}

const PROTOCOLS: ReadonlySet<string> = new Set(['TCP', 'UDP']);
const NOT_BUILT = new Set(['GELF_TCP', 'GELF_UDP', 'NETFLOW_UDP']);

/** The charsets a listener can decode (what TextDecoder knows), by their canonical name. */
function canonicalCharset(name: string): string | null {
  try {
    return new TextDecoder(name).encoding;
  } catch {
    return null;
  }
}

export class ListenerService {
  constructor(
    private readonly store: GlobalStore,
    private readonly clock: Clock,
    private readonly maxListeners: number,
  ) {}

  list(p: Principal, repositoryName: string): IngestListenerDef[] {
    const repo = visibleRepository(this.store.state, p, repositoryName);
    return this.store.state.listeners.forRepository(repo.id);
  }

  /** The repository of a listener (listeners are dropped with their repository, so it exists). */
  repositoryOf(l: IngestListenerDef): Repository {
    const r = this.store.state.repositories.get(l.repositoryId);
    if (r === undefined) throw new LogsvcError('E_NOT_FOUND', `the repository of ingest listener "${l.name}" no longer exists`);
    return r;
  }

  get(id: string): IngestListenerDef | undefined {
    return this.store.state.listeners.byId.get(id);
  }

  async create(p: Principal, input: ListenerInput): Promise<IngestListenerDef> {
    requireRoot(p, 'createIngestListenerV3');
    return this.save(p, input, null);
  }

  async update(p: Principal, id: string, input: ListenerInput): Promise<IngestListenerDef> {
    requireRoot(p, 'updateIngestListenerV3');
    return this.save(p, input, id);
  }

  async delete(p: Principal, id: string): Promise<void> {
    requireRoot(p, 'deleteIngestListener');
    await this.store.transact((s) => {
      if (!s.listeners.byId.has(id)) throw new LogsvcError('E_NOT_FOUND', `ingest listener "${id.slice(0, 100)}" does not exist`);
      return { events: [{ type: 'IngestListenerDeleted' as const, id }], result: undefined };
    });
  }

  private async save(p: Principal, input: ListenerInput, id: string | null): Promise<IngestListenerDef> {
    const repo = visibleRepository(this.store.state, p, input.repositoryName);
    const name = input.name.trim();
    if (name === '' || name.length > 200) throw new LogsvcError('E_VALIDATION', 'name: 1-200 characters');
    if (NOT_BUILT.has(input.protocol)) throw new LogsvcError('E_VALIDATION', `protocol ${input.protocol} is not built in logsvc; use TCP or UDP (syslog and other line-based formats)`);
    if (!PROTOCOLS.has(input.protocol)) throw new LogsvcError('E_VALIDATION', 'protocol: TCP or UDP');
    if (!Number.isInteger(input.port) || input.port < 1 || input.port > 65535) throw new LogsvcError('E_VALIDATION', `port: an integer from 1 to 65535, not ${input.port}`);
    const bind = (input.bindInterface ?? '').trim();
    if (bind !== '' && isIP(bind) === 0) throw new LogsvcError('E_VALIDATION', `bindInterface: "${bind.slice(0, 100)}" is not an IP address (leave it empty for every interface)`);
    const charset = canonicalCharset(input.charset == null || input.charset === '' ? 'UTF-8' : input.charset);
    if (charset === null) throw new LogsvcError('E_VALIDATION', `charset: "${String(input.charset).slice(0, 50)}" is not a character set this node can decode`);
    if (input.vHost != null && (!Number.isInteger(input.vHost) || input.vHost < 1)) throw new LogsvcError('E_VALIDATION', 'vHost: a node id (a positive integer)');
    const parser = this.parserName(repo.id, input.parser == null || input.parser === '' ? 'syslog' : input.parser);
    return this.store.transact((s) => {
      const old = id === null ? undefined : s.listeners.byId.get(id);
      if (id !== null && old === undefined) throw new LogsvcError('E_NOT_FOUND', `ingest listener "${id.slice(0, 100)}" does not exist`);
      if (id === null && s.listeners.byId.size >= this.maxListeners) throw new LogsvcError('E_VALIDATION', `the cluster has its limit of ${this.maxListeners} ingest listeners (listeners.max_listeners)`);
      for (const l of s.listeners.byId.values()) {
        if (l.id === id) continue;
        if (l.repositoryId === repo.id && l.name === name) throw new LogsvcError('E_CONFLICT', `repository "${repo.name}" already has an ingest listener named "${name}"`);
        const overlaps = l.bindInterface === '' || bind === '' || l.bindInterface === bind;
        if (l.protocol === input.protocol && l.port === input.port && overlaps && (l.vHost === null || input.vHost == null || l.vHost === input.vHost)) {
          throw new LogsvcError('E_CONFLICT', `ingest listener "${l.name}" already listens on ${input.protocol} port ${input.port}`);
        }
      }
      const listener: IngestListenerDef = {
        id: old?.id ?? randomBytes(16).toString('base64url'),
        name,
        repositoryId: repo.id,
        protocol: input.protocol as ListenerProtocol,
        bindInterface: bind,
        port: input.port,
        parser,
        charset,
        vHost: input.vHost ?? null,
        createdAt: old?.createdAt ?? this.clock.now(),
      };
      return { events: [{ type: 'IngestListenerSaved' as const, listener }], result: listener };
    });
  }

  /** A built-in parser's name, or a custom parser of the repository by name or id (stored by name). */
  private parserName(repositoryId: string, ref: string): string {
    if (isBuiltInParser(ref)) return ref;
    const ps = this.store.state.parsers;
    const found = ps.byName(repositoryId, ref) ?? ps.byId(repositoryId, ref);
    if (found === undefined) throw new LogsvcError('E_VALIDATION', `parser "${ref.slice(0, 100)}" is neither a built-in parser nor one of the repository's parsers`);
    return found.name;
  }
}
