/**
 * Uploaded lookup files in global state: which name in which scope (a repository, or the shared
 * scope) holds which content. The bytes live on disk under their content hash (src/files), so a
 * replace is one event switching a name to a new hash: readers see the old file or the new one.
 */

/** The scope of shared files (`/shared/<name>` in queries). */
export const SHARED_SCOPE = '';

export interface StoredFile {
  /** A repository id, or SHARED_SCOPE. */
  scope: string;
  name: string;
  /** SHA-256 of the bytes, hex. */
  contentHash: string;
  size: number;
  rows: number;
  uploadedAt: number;
}

export type FileEvent =
  | { type: 'FileStored'; scope: string; name: string; contentHash: string; size: number; rows: number; at: number }
  | { type: 'FileRemoved'; scope: string; name: string };

export class FileIndex {
  /** scope -> name -> file. */
  private readonly byScope = new Map<string, Map<string, StoredFile>>();
  /** content hash -> how many names refer to it (so `referenced` is O(1) per blob, not a scan). */
  private readonly refs = new Map<string, number>();
  /** Bytes of distinct contents: what the blob directory holds. */
  private distinctBytes = 0;

  apply(e: FileEvent): void {
    if (e.type === 'FileStored') {
      let m = this.byScope.get(e.scope);
      if (m === undefined) this.byScope.set(e.scope, (m = new Map()));
      const old = m.get(e.name);
      m.set(e.name, { scope: e.scope, name: e.name, contentHash: e.contentHash, size: e.size, rows: e.rows, uploadedAt: e.at });
      this.addRef(e.contentHash, e.size);
      if (old !== undefined) this.dropRef(old);
      return;
    }
    const m = this.byScope.get(e.scope);
    const old = m?.get(e.name);
    if (old !== undefined) this.dropRef(old);
    m?.delete(e.name);
    if (m?.size === 0) this.byScope.delete(e.scope);
  }

  private addRef(hash: string, size: number): void {
    const n = this.refs.get(hash) ?? 0;
    if (n === 0) this.distinctBytes += size;
    this.refs.set(hash, n + 1);
  }

  private dropRef(f: StoredFile): void {
    const n = (this.refs.get(f.contentHash) ?? 1) - 1;
    if (n > 0) {
      this.refs.set(f.contentHash, n);
      return;
    }
    this.refs.delete(f.contentHash);
    this.distinctBytes -= f.size;
  }

  /** Bytes of all distinct stored contents (a content shared by several names counts once). */
  get totalBytes(): number {
    return this.distinctBytes;
  }

  get(scope: string, name: string): StoredFile | undefined {
    return this.byScope.get(scope)?.get(name);
  }

  list(scope: string): StoredFile[] {
    return [...(this.byScope.get(scope)?.values() ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  }

  count(scope: string): number {
    return this.byScope.get(scope)?.size ?? 0;
  }

  /** Whether any scope still refers to this content. */
  referenced(contentHash: string): boolean {
    return this.refs.has(contentHash);
  }

  /** A deleted repository's files go with it. */
  dropScope(scope: string): void {
    const m = this.byScope.get(scope);
    if (m === undefined) return;
    for (const f of m.values()) this.dropRef(f);
    this.byScope.delete(scope);
  }

  all(): StoredFile[] {
    return [...this.byScope.values()].flatMap((m) => [...m.values()]);
  }

  static fromSnapshot(files: readonly StoredFile[] | undefined): FileIndex {
    const ix = new FileIndex();
    for (const f of files ?? []) ix.apply({ type: 'FileStored', scope: f.scope, name: f.name, contentHash: f.contentHash, size: f.size, rows: f.rows, at: f.uploadedAt });
    return ix;
  }
}
