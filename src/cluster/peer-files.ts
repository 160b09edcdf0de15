/**
 * Lookup-file content across a cluster. An upload lands in one node's blob store; global state names
 * the file by its content hash everywhere. A node that needs content it lacks asks the live peers in
 * turn (`file.blob`, a streamed answer of 1 MiB chunks, so a file of any allowed size fits the
 * protocol's frame bound); the caller checks the hash and keeps the copy.
 */
import { LogsvcError } from '../lib/errors.js';

export const FILE_BLOB = 'file.blob';
const CHUNK_BYTES = 1024 * 1024;

export interface PeerStreams {
  aliveIds(): Set<number>;
  stream(nodeId: number, type: string, body: unknown, opts?: { timeoutMs?: number }): AsyncIterableIterator<unknown>;
  handleStream(type: string, fn: (body: unknown) => AsyncIterable<unknown>): void;
}

export function servePeerFiles(rpc: PeerStreams, selfId: number, local: (hash: string) => Promise<Buffer | null>, maxBytes: number, timeoutMs: number): (hash: string) => Promise<Buffer | null> {
  rpc.handleStream(FILE_BLOB, async function* serve(body) {
    const hash = (body as { hash?: unknown } | null)?.hash;
    if (typeof hash !== 'string' || !/^[0-9a-f]{64}$/.test(hash)) throw new LogsvcError('E_BAD_REQUEST', 'file.blob: a content hash is required');
    const bytes = await local(hash);
    if (bytes === null) throw new LogsvcError('E_NOT_FOUND', 'file.blob: not on this node');
    for (let at = 0; at < bytes.length; at += CHUNK_BYTES) yield bytes.subarray(at, Math.min(bytes.length, at + CHUNK_BYTES));
  });
  return async (hash) => {
    for (const node of rpc.aliveIds()) {
      if (node === selfId) continue;
      const parts: Buffer[] = [];
      let size = 0;
      try {
        for await (const chunk of rpc.stream(node, FILE_BLOB, { hash }, { timeoutMs })) {
          const b = Buffer.from(chunk as Uint8Array);
          size += b.length;
          if (size > maxBytes) throw new LogsvcError('E_BODY_TOO_LARGE', 'file.blob: larger than files.max_file_bytes');
          parts.push(b);
        }
        return Buffer.concat(parts);
      } catch {
        // Not there, or the link failed: the next peer.
      }
    }
    return null;
  };
}
