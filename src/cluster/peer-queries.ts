/**
 * Search across nodes. The node a query comes to asks every other live node for its part (request
 * `query.scan` on the cluster protocol): the events that node holds itself (its segments and the
 * partitions it digests), scanned exactly as locally, up to the first aggregate, merged into one
 * partial state. The coordinator merges those with its own (QueryExecutor). Each event is in
 * exactly one node's part: a digest owner's blocks hold only events past the marks it started
 * from, and blocks of a lost epoch past its end are void (DigestOwnership).
 *
 * Aggregate states travel as V8 serialization (what the worker pool's structured clone already
 * carries), inside the msgpack frame. Nodes that hold segments of the repository over the query's
 * range but are not alive make the answer carry the product's missing-segments warning.
 */
import { deserialize, serialize } from 'node:v8';
import { LogsvcError } from '../lib/errors.js';
import type { GlobalStore } from '../global/index.js';
import type { PeerScans, SearchTarget } from '../query/executor.js';
import type { QuerySpec, ScanResult } from '../query/scan.js';

export const QUERY_SCAN = 'query.scan';

/** What this module needs of the cluster protocol (Membership). */
export interface PeerRpc {
  aliveIds(): Set<number>;
  request(nodeId: number, type: string, body: unknown, opts?: { timeoutMs?: number }): Promise<unknown>;
  handle(type: string, fn: (body: unknown) => Promise<unknown>): void;
}

interface ScanRequest {
  /** A repository, or a view with its repositories and their filters. */
  repo: SearchTarget;
  text: string;
  args: Record<string, string>;
  ctx: QuerySpec['ctx'];
  limits: QuerySpec['limits'];
  /** A streamed filter query (/query): the peer answers with every matching event (query/stream.ts). */
  stream?: boolean;
}

interface WireScanResult extends Omit<ScanResult, 'state'> {
  state: Uint8Array;
}

export interface PeerQueriesOptions {
  selfId: number;
  rpc: PeerRpc;
  store: GlobalStore;
  /** This node's part of a query (QueryExecutor.scanLocal after loading the lookup tables it names). */
  scanLocal: (spec: QuerySpec, repo: SearchTarget) => Promise<ScanResult>;
  /** The spec a peer sent, with this node's lookup tables loaded for it. */
  withFiles: (spec: QuerySpec, repoId: string) => Promise<QuerySpec>;
  timeoutMs: number;
}

export class PeerQueries implements PeerScans {
  constructor(private readonly opts: PeerQueriesOptions) {
    opts.rpc.handle(QUERY_SCAN, (body) => this.serve(body));
  }

  plan(spec: QuerySpec, repo: SearchTarget): ReturnType<PeerScans['plan']> {
    const { selfId, rpc, store } = this.opts;
    const alive = rpc.aliveIds();
    const target: SearchTarget = repo.sources === undefined ? { id: repo.id, name: repo.name } : { id: repo.id, name: repo.name, sources: repo.sources.map((s) => ({ ...s })) };
    const request: ScanRequest = { repo: target, text: spec.text, args: spec.args, ctx: spec.ctx, limits: spec.limits, ...(spec.stream === true ? { stream: true } : {}) };
    const remotes = [...alive]
      .filter((n) => n !== selfId)
      .map((node) => ({
        node,
        scan: async (): Promise<ScanResult> => {
          const res = (await rpc.request(node, QUERY_SCAN, request, { timeoutMs: this.opts.timeoutMs })) as WireScanResult;
          return { ...res, state: deserialize(Buffer.from(res.state.buffer, res.state.byteOffset, res.state.byteLength)) as unknown };
        },
      }));
    const ids = repo.sources?.map((s) => s.id) ?? [repo.id];
    const unreachable = [...new Set(ids.flatMap((id) => store.state.cluster.holdersOf(id, spec.ctx.start, spec.ctx.end)))].filter((n) => n !== selfId && !alive.has(n));
    return { remotes, unreachable };
  }

  private async serve(body: unknown): Promise<WireScanResult> {
    const b = body as Partial<ScanRequest> | null;
    if (b === null || typeof b !== 'object' || typeof b.text !== 'string' || b.repo === undefined || b.ctx === undefined || b.limits === undefined) {
      throw new LogsvcError('E_BAD_REQUEST', 'query.scan: malformed request');
    }
    const target = b.repo;
    for (const id of target.sources?.map((s) => s.id) ?? [target.id]) {
      if (!this.opts.store.state.repositories.has(id)) throw new LogsvcError('E_NOT_FOUND', `query.scan: no repository ${id} on this node`);
    }
    const spec = await this.opts.withFiles({ text: b.text, args: b.args ?? {}, ctx: b.ctx, limits: b.limits, ...(b.stream === true ? { stream: true } : {}) }, target.sources?.[0]?.id ?? target.id);
    const res = await this.opts.scanLocal(spec, target);
    return { ...res, state: serialize(res.state) };
  }
}
