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
import type { Logger } from '../lib/logger.js';
import type { GlobalStore } from '../global/index.js';
import type { PeerScans, SearchTarget } from '../query/executor.js';
import type { QuerySpec, ScanResult } from '../query/scan.js';
import { MISSING_SEGMENTS_WARNING } from '../query/executor.js';
import { holdersOf } from '../global/segment-holdings.js';
import { chooseHolder, entirelyVoid, type Placement } from './placement.js';
import type { LiveBoundary, Reach } from './live-boundary.js';

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
  /** Absent from nodes older than segment replication: then every node reads all it holds. */
  placement?: Placement;
  /** A streamed filter query (/query): the peer answers with every matching event (query/stream.ts). */
  stream?: boolean;
  /** A live query's historical part: its boundary per partition (QuerySpec.below, live-boundary.ts). */
  below?: number[];
}

interface WireScanResult extends Omit<ScanResult, 'state'> {
  state: Uint8Array;
  /** With `below`: how far this node's digesters had read when it took its snapshot. */
  reached?: Reach;
}

export interface PeerQueriesOptions {
  selfId: number;
  rpc: PeerRpc;
  store: GlobalStore;
  /** This node's part of a query (QueryExecutor.scanLocal after loading the lookup tables it names). */
  scanLocal: (spec: QuerySpec, repo: SearchTarget, placement?: Placement) => Promise<ScanResult>;
  /** Whether this node's catalog has a segment (a holder that lost its copy says the answer is partial). */
  hasSegment: (id: string) => boolean;
  /** The spec a peer sent, with this node's lookup tables loaded for it. */
  withFiles: (spec: QuerySpec, repoId: string) => Promise<QuerySpec>;
  timeoutMs: number;
  logger?: Logger;
  /** Whether this node's stop has begun: it then refuses query parts (E_NODE_STOPPING). */
  stopping?: () => boolean;
  /** Live queries' start boundary; without it a live query's boundary is not kept. */
  boundary?: LiveBoundary;
}

export class PeerQueries implements PeerScans {
  constructor(private readonly opts: PeerQueriesOptions) {
    opts.rpc.handle(QUERY_SCAN, (body) => this.serve(body));
  }

  plan(spec: QuerySpec, repo: SearchTarget): ReturnType<PeerScans['plan']> {
    const { selfId, rpc, store } = this.opts;
    const alive = rpc.aliveIds();
    alive.add(selfId);
    const placement: Placement = { seq: store.state.seq, coordinator: selfId, live: [...alive].sort((a, b) => a - b) };
    const target: SearchTarget = repo.sources === undefined ? { id: repo.id, name: repo.name } : { id: repo.id, name: repo.name, sources: repo.sources.map((s) => ({ ...s })) };
    const boundary = spec.below === undefined ? undefined : this.opts.boundary;
    if (boundary !== undefined) placement.epochs = boundary.epochs();
    const request: ScanRequest = { repo: target, text: spec.text, args: spec.args, ctx: spec.ctx, limits: spec.limits, placement, ...(spec.stream === true ? { stream: true } : {}), ...(spec.below === undefined ? {} : { below: spec.below }) };
    // A live query: how far each part's digesters had read (null: the part failed).
    const reaches: Promise<Reach | null>[] = [];
    const remotes = [...alive]
      .filter((n) => n !== selfId)
      .map((node) => ({
        node,
        scan: (): Promise<ScanResult> => {
          const res = this.scanPeer(node, request);
          reaches.push(res.then((r) => r.reached ?? [], () => null));
          return res.then((r) => ({ events: r.events, bytes: r.bytes, blocksRead: r.blocksRead, blocksSkipped: r.blocksSkipped, matched: r.matched, warnings: r.warnings, state: deserialize(Buffer.from(r.state.buffer, r.state.byteOffset, r.state.byteLength)) as unknown }));
        },
      }));
    if (boundary !== undefined) {
      // This node's own part: its snapshot is taken right after this returns, in the same step.
      reaches.push(Promise.resolve(boundary.report(spec.below!, placement.epochs!)));
      const epochs = placement.epochs!;
      // Last: the executor has asked every other part by the time it asks this one.
      remotes.push({ node: selfId, scan: () => boundary.fill(spec, target, epochs, reaches, Date.now() + this.opts.timeoutMs, MISSING_SEGMENTS_WARNING) });
    }
    const ids = repo.sources?.map((s) => s.id) ?? [repo.id];
    return { remotes, unreachable: this.unreachable(ids, spec.ctx, placement), placement };
  }

  private async scanPeer(node: number, request: ScanRequest): Promise<WireScanResult> {
    try {
      return (await this.opts.rpc.request(node, QUERY_SCAN, request, { timeoutMs: this.opts.timeoutMs })) as WireScanResult;
    } catch (err) {
      // Its part is left out and the answer says so; the reason is worth a line in the log.
      this.opts.logger?.warn('query part from a peer failed', { node, error: (err as Error).message });
      throw err;
    }
  }

  /**
   * Nodes whose part of the answer cannot be had: holders of a listed segment in the range none of
   * whose holders is live, dead digest owners of data in the range (what they had in memory and
   * in segments not listed yet is theirs alone until another node has taken the partition over).
   */
  private unreachable(repoIds: readonly string[], ctx: QuerySpec['ctx'], p: Placement): number[] {
    const cluster = this.opts.store.state.cluster;
    const out = new Set<number>();
    for (const id of repoIds) {
      for (const entry of cluster.segments.ofRepository(id)) {
        const s = entry.segment;
        if (s.maxTs < ctx.start || s.minTs > ctx.end) continue;
        const holders = holdersOf(entry, p.seq);
        if (holders.length === 0 || chooseHolder(s.id, holders, p) !== null) continue;
        if (cluster.segments.superseded(s.id, (n) => p.live.includes(n), p.seq)) continue;
        if (entirelyVoid(s, cluster.endOf(s.partition, s.epoch))) continue;
        for (const h of holders) out.add(h);
      }
      const holding = new Set(cluster.holdersOf(id, ctx.start, ctx.end));
      for (const ep of cluster.epochs.values()) if (!p.live.includes(ep.node) && holding.has(ep.node)) out.add(ep.node);
    }
    // A partition being taken over or handed over: its new owner has not started digesting yet, so
    // its newest events are searchable nowhere for a moment.
    if (ctx.end >= Date.now() - 3_600_000) for (const ep of cluster.epochs.values()) if (!ep.reported) out.add(ep.node);
    return [...out];
  }

  /** Listed segments this node was to read for a query but does not have (lost since). */
  private lost(repoIds: readonly string[], ctx: QuerySpec['ctx'], p: Placement): number {
    const cluster = this.opts.store.state.cluster;
    let n = 0;
    for (const id of repoIds) {
      for (const entry of cluster.segments.ofRepository(id)) {
        const s = entry.segment;
        if (s.maxTs < ctx.start || s.minTs > ctx.end || this.opts.hasSegment(s.id)) continue;
        if (chooseHolder(s.id, holdersOf(entry, p.seq), p) !== this.opts.selfId || entirelyVoid(s, cluster.endOf(s.partition, s.epoch))) continue;
        if (!cluster.segments.superseded(s.id, (x) => p.live.includes(x), p.seq)) n++;
      }
    }
    return n;
  }

  private async serve(body: unknown): Promise<WireScanResult> {
    // A stopping node takes no new work (issue 24): the coordinator leaves its part out and the
    // answer carries the missing-segments warning, never a part that may be cut short by the stop.
    if (this.opts.stopping?.() === true) throw new LogsvcError('E_NODE_STOPPING', `query.scan: node ${this.opts.selfId} is stopping; its part is left out and the answer says so`);
    const b = body as Partial<ScanRequest> | null;
    if (b === null || typeof b !== 'object' || typeof b.text !== 'string' || b.repo === undefined || b.ctx === undefined || b.limits === undefined) {
      throw new LogsvcError('E_BAD_REQUEST', 'query.scan: malformed request');
    }
    const target = b.repo;
    for (const id of target.sources?.map((s) => s.id) ?? [target.id]) {
      if (!this.opts.store.state.repositories.has(id)) throw new LogsvcError('E_NOT_FOUND', `query.scan: no repository ${id} on this node`);
    }
    const placement = b.placement;
    // Every node chooses the segments it reads as of the coordinator's sequence number.
    if (placement !== undefined && !(await this.opts.store.waitForSeq(placement.seq, 5000))) {
      throw new LogsvcError('E_UNAVAILABLE', `query.scan: node ${this.opts.selfId} has not caught up with global state (seq ${placement.seq})`);
    }
    const below = Array.isArray(b.below) && b.below.every((o) => Number.isSafeInteger(o) && o >= 0) ? b.below : undefined;
    const spec = await this.opts.withFiles({ text: b.text, args: b.args ?? {}, ctx: b.ctx, limits: b.limits, ...(b.stream === true ? { stream: true } : {}), ...(below === undefined ? {} : { below }) }, target.sources?.[0]?.id ?? target.id);
    // A live query's boundary: this node's digest reads up to it first (bounded); then how far it
    // got is told in the same step as the snapshot (scanLocal takes it before its first await).
    const boundary = below === undefined ? undefined : this.opts.boundary;
    const epochs = placement?.epochs ?? boundary?.epochs() ?? [];
    if (boundary !== undefined) await boundary.settle(below!, epochs);
    const reached = boundary === undefined ? undefined : boundary.report(below!, epochs);
    const res = await this.opts.scanLocal(spec, target, placement);
    const ids = target.sources?.map((s) => s.id) ?? [target.id];
    if (placement !== undefined && this.lost(ids, b.ctx, placement) > 0) res.warnings.push(MISSING_SEGMENTS_WARNING);
    return { ...res, state: serialize(res.state), ...(reached === undefined ? {} : { reached }) };
  }
}
