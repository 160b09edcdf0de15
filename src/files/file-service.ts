/**
 * FileService: uploaded lookup files. Upload (parse and pack on the worker pool, which also
 * validates; write the bytes under their hash; one global event makes the name point at them),
 * download, removal, listing, and the tables queries use: each content hash is packed once and
 * kept in a memory-bounded cache whose SharedArrayBuffers the worker threads read in place.
 */
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { LogsvcError } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import type { Clock } from '../lib/clock.js';
import { canSeeRepository, principalHas, requireRight, requireRoot, requireUser, visibleRepository, type DomainRight, type Principal } from '../auth/index.js';
import { SHARED_SCOPE, type GlobalStore, type StoredFile } from '../global/index.js';
import { contentHash, type BlobStore } from './blob-store.js';
import { checkFileName, SHARED_PREFIX, type FileKind } from './names.js';
import { receiveMultipartFile } from './multipart.js';
import { tableKey, type PackedTable } from './packed.js';
import type { PackSource } from './pack-task.js';
import { checkCsvHeader } from './parse.js';

type FileRight = Extract<DomainRight, `${string}:Files`>;
/** An upload creates a file or replaces one: either right lets it start. */
const UPLOAD_RIGHTS: readonly FileRight[] = ['create:Files', 'update:Files'];

/** Packs a file (bytes, or a path on disk) into a table (the worker pool; inline in tests). Throws LogsvcError for bad files. */
export interface TablePacker {
  pack(source: PackSource, kind: FileKind, hash: string, maxRows: number): Promise<PackedTable>;
}

export interface FileLimits {
  maxFileBytes: number;
  maxRows: number;
  maxFilesPerRepository: number;
  /** Bytes of distinct file contents all scopes together may hold on disk. */
  maxTotalBytes: number;
  /** Bytes of packed tables kept in memory. */
  cacheBytes: number;
}

interface CacheEntry {
  table: Promise<PackedTable>;
  bytes: number;
}

export class FileService {
  private readonly cache = new Map<string, CacheEntry>();
  private cachedBytes = 0;

  private remoteBlobs: ((hash: string) => Promise<Buffer | null>) | null = null;

  constructor(
    private readonly store: GlobalStore,
    private readonly blobs: BlobStore,
    private readonly packer: TablePacker,
    private readonly limits: FileLimits,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    store.onApplied((e) => {
      if (e.type === 'RepositoryDeleted' || e.type === 'FileRemoved' || e.type === 'FileStored') this.scheduleSweep();
    });
  }

  private sweeping: Promise<void> | null = null;

  private scheduleSweep(): void {
    this.sweeping ??= (async () => {
      // After the transaction that triggered it has been applied.
      await new Promise((r) => setImmediate(r));
      this.sweeping = null;
      const removed = await this.blobs.sweep((h) => this.store.state.files.referenced(h));
      if (removed > 0) this.logger.debug('unreferenced file contents removed', { removed });
    })().catch((err: unknown) => this.logger.error('removing unreferenced file contents failed', { error: (err as Error).message }));
  }

  /**
   * The scope of a repository the principal may use, or SHARED_SCOPE (root only). A change needs
   * one of the rights in `change` there (an upload creates or replaces: which one is decided when
   * it is recorded).
   */
  private scope(p: Principal, repositoryName: string | null, action: string, change: readonly FileRight[] = []): { scope: string; where: string } {
    requireUser(p, action);
    if (repositoryName === null) {
      requireRoot(p, `${action} (a shared file)`);
      return { scope: SHARED_SCOPE, where: 'the shared files' };
    }
    const state = this.store.state;
    const repo = visibleRepository(state, p, repositoryName);
    if (change.length > 0 && !change.some((r) => principalHas(state, p, repo, r))) requireRight(state, p, repo, change[0]!, action);
    return { scope: repo.id, where: `repository "${repo.name}"` };
  }

  /** Stores (or atomically replaces) a file; `repositoryName` null means a shared file (root only). */
  /**
   * A cluster: where to fetch a file's content that another node received (the upload went to one
   * node's blob store; global state only names it). Called with the content hash; resolves with the
   * bytes or null when no peer has them.
   */
  setRemoteBlobs(fetch: (hash: string) => Promise<Buffer | null>): void {
    this.remoteBlobs = fetch;
  }

  /** This node's copy of a file's content, fetched from a peer (and kept) when it has none yet. */
  private async readBlob(hash: string): Promise<Buffer> {
    try {
      return await this.blobs.read(hash);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || this.remoteBlobs === null) throw err;
    }
    const bytes = await this.remoteBlobs(hash);
    if (bytes === null) throw new LogsvcError('E_UNAVAILABLE', 'the lookup file\'s content is on no node that can be reached now; retry later');
    if (contentHash(bytes) !== hash) throw new LogsvcError('E_UNAVAILABLE', 'a peer sent a lookup file whose content does not match its hash; retry');
    await this.blobs.hold(hash, bytes);
    this.blobs.release(hash);
    return bytes;
  }

  /** Where to pack a stored file from: this node's blob on disk, else the bytes fetched from a peer. */
  private async blobSource(hash: string): Promise<PackSource> {
    const path = this.blobs.path(hash);
    const size = await stat(path).then((s) => s.size, () => null);
    return size !== null ? { path, size } : { bytes: await this.readBlob(hash) };
  }

  /** This node's own copy of a content hash, for a peer that asks (null when it has none). */
  async localBlob(hash: string): Promise<Buffer | null> {
    try {
      return await this.blobs.read(hash);
    } catch {
      return null;
    }
  }

  async upload(p: Principal, repositoryName: string | null, fileName: string, bytes: Buffer): Promise<StoredFile> {
    const { scope, where } = this.scope(p, repositoryName, 'uploading a file', UPLOAD_RIGHTS);
    const kind = checkFileName(fileName);
    if (bytes.byteLength > this.limits.maxFileBytes) {
      throw new LogsvcError('E_BODY_TOO_LARGE', `file "${fileName}" is ${bytes.byteLength} bytes, more than the limit of ${this.limits.maxFileBytes} (files.max_file_bytes)`);
    }
    // Too many columns is refused from the header row, before the full parse (on a worker).
    if (kind === 'csv') checkCsvHeader(bytes);
    const hash = contentHash(bytes);
    // Parsing validates the file; the packed table is kept for the queries that will use it.
    const table = await this.tableOf(hash, () => Promise.resolve({ bytes }), kind);
    await this.holdBlob(fileName, () => this.blobs.hold(hash, bytes));
    return this.record(p, scope, where, fileName, hash, bytes.byteLength, table);
  }

  /**
   * Stores (or atomically replaces) a file sent as a multipart body, read as it arrives: the
   * principal and scope are checked before any byte is read, the file part goes to disk (hashed on
   * the way) and is refused as soon as it passes files.max_file_bytes or its name is bad; a CSV
   * file is then packed streaming from disk (packCsv), refused as soon as a bound is passed. The
   * received file becomes the blob by a rename. Memory follows the packed table, not the file.
   */
  async uploadStream(p: Principal, repositoryName: string | null, contentType: string | undefined, body: Readable): Promise<StoredFile> {
    const { scope, where } = this.scope(p, repositoryName, 'uploading a file', UPLOAD_RIGHTS);
    const path = this.blobs.uploadPath();
    try {
      // Too many columns is refused from the header row, as soon as the file's first bytes arrived.
      const csvHead = (name: string, head: Buffer): void => {
        if (checkFileName(name) === 'csv') checkCsvHeader(head);
      };
      const got = await receiveMultipartFile(contentType, body, this.limits.maxFileBytes, path, (name) => void checkFileName(name), csvHead);
      const kind = checkFileName(got.fileName);
      const table = await this.tableOf(got.hash, () => Promise.resolve({ path, size: got.size }), kind);
      await this.holdBlob(got.fileName, () => this.blobs.holdUpload(got.hash, path, got.size));
      return await this.record(p, scope, where, got.fileName, got.hash, got.size, table);
    } finally {
      await this.blobs.dropUpload(path);
    }
  }

  /** Writes a file's blob (held until released by record()); a full disk is a refusal the client may retry. */
  private async holdBlob(fileName: string, hold: () => Promise<void>): Promise<void> {
    try {
      await hold();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Nothing refers to the bytes yet: the upload failed and may be retried when there is room.
      if (code === 'ENOSPC' || code === 'EDQUOT') throw new LogsvcError('E_UNAVAILABLE', `file "${fileName}" cannot be stored: the data directory is out of space (${code}); free space and retry`);
      throw err;
    }
  }

  /**
   * The global event that makes `fileName` in `scope` name the held blob `hash`; releases the hold.
   * In a repository, `p` needs the right to create a file or, when the name exists, to replace one.
   */
  private async record(p: Principal, scope: string, where: string, fileName: string, hash: string, size: number, table: PackedTable): Promise<StoredFile> {
    try {
      await this.store.transact((s) => {
        if (scope !== SHARED_SCOPE) {
          const repo = s.repositories.get(scope);
          if (repo === undefined) throw new LogsvcError('E_NOT_FOUND', `${where} no longer exists`);
          const replaces = s.files.get(scope, fileName) !== undefined;
          requireRight(s, p, repo, replaces ? 'update:Files' : 'create:Files', replaces ? 'replacing a file' : 'uploading a new file');
        }
        if (s.files.get(scope, fileName) === undefined && s.files.count(scope) >= this.limits.maxFilesPerRepository) {
          throw new LogsvcError('E_CONFLICT', `${where} already has ${this.limits.maxFilesPerRepository} files (files.max_files_per_repository); remove one first`);
        }
        // New contents count toward the total; the bytes a replaced name frees are not counted back
        // here (they may still be shared), so a replace near the limit may need a removal first.
        if (!s.files.referenced(hash) && s.files.totalBytes + size > this.limits.maxTotalBytes) {
          throw new LogsvcError('E_CONFLICT', `file "${fileName}" (${size} bytes) would take the stored files past ${this.limits.maxTotalBytes} bytes (files.max_total_bytes; ${s.files.totalBytes} in use); remove files first`);
        }
        return { events: [{ type: 'FileStored', scope, name: fileName, contentHash: hash, size, rows: table.nRows, at: this.clock.now() }], result: undefined };
      });
    } finally {
      this.blobs.release(hash);
    }
    return this.store.state.files.get(scope, fileName)!;
  }

  private find(p: Principal, repositoryName: string | null, fileName: string, action: string): StoredFile {
    const { scope, where } = this.scope(p, repositoryName, action);
    checkFileName(fileName);
    const f = this.store.state.files.get(scope, fileName);
    if (f === undefined) throw new LogsvcError('E_NOT_FOUND', `file "${fileName.slice(0, 255)}" does not exist in ${where}`);
    return f;
  }

  async download(p: Principal, repositoryName: string, fileName: string): Promise<{ file: StoredFile; bytes: Buffer }> {
    const file = this.find(p, repositoryName, fileName, 'reading a file');
    try {
      return { file, bytes: await this.readBlob(file.contentHash) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new LogsvcError('E_NOT_FOUND', `file "${fileName}" was replaced or removed meanwhile; retry`);
      throw err;
    }
  }

  async remove(p: Principal, repositoryName: string | null, fileName: string): Promise<void> {
    const { scope, where } = this.scope(p, repositoryName, 'removing a file', ['delete:Files']);
    checkFileName(fileName);
    await this.store.transact((s) => {
      if (s.files.get(scope, fileName) === undefined) throw new LogsvcError('E_NOT_FOUND', `file "${fileName.slice(0, 255)}" does not exist in ${where}`);
      return { events: [{ type: 'FileRemoved', scope, name: fileName }], result: undefined };
    });
  }

  /** A repository's files, then the shared files (visible in every repository). */
  list(p: Principal, repositoryName: string): { file: StoredFile; shared: boolean }[] {
    requireUser(p, 'listing files');
    const repo = visibleRepository(this.store.state, p, repositoryName);
    const files = this.store.state.files;
    return [...files.list(repo.id).map((file) => ({ file, shared: false })), ...files.list(SHARED_SCOPE).map((file) => ({ file, shared: true }))];
  }

  /** The stored file a query's file argument names: `/shared/<name>` or a file of the repository. */
  resolve(repositoryId: string, name: string): StoredFile | undefined {
    const files = this.store.state.files;
    if (name.startsWith(SHARED_PREFIX)) return files.get(SHARED_SCOPE, name.slice(SHARED_PREFIX.length));
    return files.get(repositoryId, name);
  }

  /**
   * The packed tables of the files a query names, by the name it uses; names that do not resolve are
   * left out (compiling the query then fails naming them).
   */
  async tablesFor(repositoryId: string, names: readonly string[]): Promise<Record<string, PackedTable>> {
    const out: Record<string, PackedTable> = {};
    for (const name of new Set(names)) {
      const f = this.resolve(repositoryId, name);
      if (f === undefined) continue;
      const kind = checkFileName(f.name);
      out[name] = await this.tableOf(f.contentHash, () => this.blobSource(f.contentHash), kind);
    }
    return out;
  }

  /** The repository check for query use (member or root). */
  canUse(p: Principal, repositoryId: string): boolean {
    const repo = this.store.state.repositories.get(repositoryId);
    return repo !== undefined && canSeeRepository(this.store.state, p, repo);
  }

  /** The table of some bytes read as `kind`, cached by hash and kind (a .csv and a .json of the same bytes differ). */
  private tableOf(hash: string, source: () => Promise<PackSource>, kind: FileKind): Promise<PackedTable> {
    const key = tableKey({ hash, kind });
    const hit = this.cache.get(key);
    if (hit !== undefined) {
      // Most recently used last.
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit.table;
    }
    const entry: CacheEntry = { table: Promise.resolve(null as never), bytes: 0 };
    entry.table = (async () => {
      let raw: PackSource;
      try {
        raw = await source();
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new LogsvcError('E_UNAVAILABLE', 'a lookup file was replaced or removed while it was being loaded; retry');
        throw err;
      }
      const table = await this.packOneAtATime(() => this.packer.pack(raw, kind, hash, this.limits.maxRows));
      entry.bytes = table.sab.byteLength;
      this.cachedBytes += entry.bytes;
      this.evict(key);
      return table;
    })();
    this.cache.set(key, entry);
    entry.table.catch(() => {
      if (this.cache.get(key) === entry) this.cache.delete(key);
    });
    return entry.table;
  }

  /** The last pack started; the next one waits for it. */
  private packing: Promise<unknown> = Promise.resolve();

  /**
   * Runs packs one after another: a pack holds its table (a JSON file's text and rows too, a few
   * times the file's size) and takes a pool thread, so parallel uploads of large files would
   * multiply the memory and crowd out ingest and queries.
   */
  private packOneAtATime<T>(run: () => Promise<T>): Promise<T> {
    const next = this.packing.then(run, run);
    this.packing = next.catch(() => undefined);
    return next;
  }

  /** Drops least recently used tables until the cache fits (never the one just loaded). */
  private evict(keep: string): void {
    for (const [key, e] of this.cache) {
      if (this.cachedBytes <= this.limits.cacheBytes) return;
      if (key === keep || e.bytes === 0) continue;
      this.cache.delete(key);
      this.cachedBytes -= e.bytes;
    }
  }
}
