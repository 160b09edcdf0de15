/**
 * The start boundary of a live query on a cluster (docs/cluster.md, "Live queries"). The live part
 * hears records from the node's Kafka tail from a position per partition (KafkaTail.listen); the
 * historical part takes every event below that position and none at or past it, so each event is
 * in exactly one of them:
 *
 * - every node cuts what it scans at the position (QuerySpec.below), first waiting (bounded) until
 *   its digest has read that far in the partitions it digests (`settle`);
 * - the query's placement names each partition's digest epoch as of its sequence number; a node
 *   reads a partition's memory only from its digester of that epoch and leaves out segments of
 *   later epochs, so a partition handed over meanwhile is read as it was (node.ts sources);
 * - that digester's node says how far it had read when it took its snapshot (`report`); what lies
 *   between there and the position (a digest that was slower than the bound, or that handed the
 *   partition over before reaching it) is read from Kafka by the coordinator and scanned like
 *   memory (`fill`), leaving out what the epoch's start marks say earlier epochs' segments hold.
 */
import { LogsvcError } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import type { GlobalStore } from '../global/index.js';
import type { DigesterProgress } from '../digest/digest.js';
import type { BlockPart } from '../digest/block-parts.js';
import type { QueueRecord } from '../queue/index.js';
import { groupSection, readSummary } from '../events/index.js';
import type { ScanRunner, SearchTarget } from '../query/executor.js';
import { compiledFor, splitAtAggregate, type QuerySpec, type ScanResult, type ScanUnit } from '../query/scan.js';
import type { MarkPosition } from '../global/cluster-state.js';

/** How long a node waits for its digest to reach a live query's boundary before the coordinator reads the rest from Kafka. */
export const LIVE_BOUNDARY_WAIT_MS = 1000;

/** Per partition, where the digester a node read memory of had read to: [partition, end]. */
export type Reach = [number, number][];

export interface LiveBoundaryOptions {
  selfId: number;
  store: GlobalStore;
  digest: { progressOf(partition: number, epoch: number): DigesterProgress | null };
  /** Records of a partition from an offset on (DigestQueue.read). */
  read: (partition: number, from: number) => AsyncIterable<QueueRecord>;
  runner: ScanRunner;
  logger: Logger;
  waitMs?: number;
}

/** The part of a live query's historical part that no node's scan had: [from, to) of a partition. */
interface Gap {
  partition: number;
  from: number;
  to: number;
  /** Events at or below these (per datasource) are in earlier epochs' segments, scanned there. */
  marks: ReadonlyMap<string, MarkPosition> | undefined;
}

export class LiveBoundary {
  constructor(private readonly opts: LiveBoundaryOptions) {}

  /** Each partition's digest epoch now (0: none yet): a live query's placement carries them. */
  epochs(): number[] {
    const { state } = this.opts.store;
    return state.partitions.map((_, p) => state.cluster.epochs.get(p)?.epoch ?? 0);
  }

  /**
   * Waits until this node's digester of each partition (in the epoch `epochs` names) has read up
   * to `below`, and until a partition whose epoch is this node's has its digester; at most
   * `waitMs`. A handover of one of them starting ends the wait at once: the snapshot must come
   * before this node applies the epoch's end (fencing takes its void blocks out of the catalog).
   */
  async settle(below: readonly number[], epochs: readonly number[]): Promise<void> {
    const deadline = Date.now() + (this.opts.waitMs ?? LIVE_BOUNDARY_WAIT_MS);
    const { digest, store, selfId } = this.opts;
    const moved = (): boolean => below.some((cut, p) => cut > 0 && (epochs[p] ?? 0) > 0 && (digest.progressOf(p, epochs[p]!)?.state ?? 'active') !== 'active');
    const behind = (): boolean =>
      below.some((cut, p) => {
        const epoch = epochs[p] ?? 0;
        if (cut === 0 || epoch === 0) return false;
        const at = digest.progressOf(p, epoch);
        if (at === null) {
          // Not started here yet, though global state gives it to this node.
          const ep = store.state.cluster.epochs.get(p);
          return ep?.epoch === epoch && ep.node === selfId;
        }
        return at.state === 'active' && at.end < cut;
      });
    while (behind() && !moved()) {
      if (Date.now() >= deadline) {
        this.opts.logger.info('live query: this node\'s digest did not reach the boundary in time; the coordinator reads the rest from Kafka', { waitedMs: this.opts.waitMs ?? LIVE_BOUNDARY_WAIT_MS });
        return;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /**
   * Where this node's digesters (of the epochs named) had read to; taken in the same synchronous
   * step as the snapshot it describes.
   */
  report(below: readonly number[], epochs: readonly number[]): Reach {
    const out: Reach = [];
    below.forEach((cut, p) => {
      const epoch = epochs[p] ?? 0;
      if (cut === 0 || epoch === 0) return;
      const at = this.opts.digest.progressOf(p, epoch);
      if (at !== null) out.push([p, at.end]);
    });
    return out;
  }

  /**
   * The coordinator's last part: once every node's part has answered (`parts`, null for one that
   * failed), the events of each partition between the farthest reach and the boundary, read from
   * Kafka and scanned as the digest's memory is. A partition with data below its boundary that no
   * node reported (its digest owner not reached, or not digesting it yet) is left out, with the
   * missing-data warning.
   */
  async fill(spec: QuerySpec, target: SearchTarget, epochs: readonly number[], parts: Promise<Reach | null>[], deadline: number, warning: string): Promise<ScanResult> {
    const below = spec.below ?? [];
    const reached = new Map<number, number>();
    for (const part of await Promise.all(parts)) for (const [p, end] of part ?? []) reached.set(p, Math.max(end, reached.get(p) ?? 0));
    const { agg } = splitAtAggregate(compiledFor(spec));
    const out: ScanResult = { state: agg.init(), events: 0, bytes: 0, blocksRead: 0, blocksSkipped: 0, matched: 0, warnings: [] };
    const gaps: Gap[] = [];
    below.forEach((cut, p) => {
      if (cut === 0) return;
      const end = reached.get(p);
      if (end === undefined) {
        this.opts.logger.info('live query: no node read partition memory for the boundary; its newest events may be left out', { partition: p, epoch: epochs[p] ?? 0, below: cut });
        out.warnings.push(warning);
      } else if (end < cut) gaps.push({ partition: p, from: end, to: cut, marks: (epochs[p] ?? 0) > 1 ? this.opts.store.state.cluster.endOf(p, epochs[p]! - 1) : undefined });
    });
    if (gaps.length === 0) return out;
    const sources = target.sources ?? [{ id: target.id, name: target.name, filter: '' }];
    for (const gap of gaps) {
      const units = await this.unitsOf(gap, new Set(sources.map((s) => s.id)), deadline);
      this.opts.logger.info('live query: events below the boundary read from Kafka', { partition: gap.partition, from: gap.from, to: gap.to, epoch: epochs[gap.partition] ?? 0 });
      for (const src of sources) {
        const mine = units.get(src.id);
        if (mine === undefined || mine.length === 0) continue;
        const r = await this.opts.runner.scan({ spec, repoName: src.name, units: mine, deadline, ...(src.filter === '' ? {} : { prefix: src.filter }) });
        agg.merge(out.state, r.state);
        out.events += r.events;
        out.bytes += r.bytes;
        out.blocksRead += r.blocksRead;
        out.matched += r.matched;
        out.warnings.push(...r.warnings);
      }
    }
    return out;
  }

  /** Per repository, memory units of the gap's records (one per datasource). */
  private async unitsOf(gap: Gap, repos: ReadonlySet<string>, deadline: number): Promise<Map<string, ScanUnit[]>> {
    const byDs = new Map<string, { repo: string; tags: Record<string, string>; parts: BlockPart[] }>();
    for await (const rec of this.opts.read(gap.partition, gap.from)) {
      if (rec.offset >= gap.to) break;
      if (Date.now() > deadline) throw new LogsvcError('E_QUERY_LIMIT', 'the query ran out of time (query.max_query_seconds) reading the events at its live boundary');
      const summary = readSummary(rec.payload);
      if (!repos.has(summary.repo)) continue;
      let base = 0;
      summary.groups.forEach((g, gi) => {
        const first = base;
        base += g.n;
        if (g.n === 0) return;
        const mark = gap.marks?.get(g.ds);
        let skip = 0;
        if (mark !== undefined && rec.offset <= mark.offset) skip = rec.offset < mark.offset ? g.n : Math.max(0, Math.min(g.n, mark.index - first + 1));
        if (skip >= g.n) return;
        let u = byDs.get(g.ds);
        if (u === undefined) byDs.set(g.ds, (u = { repo: summary.repo, tags: g.tags, parts: [] }));
        u.parts.push({ events: groupSection(rec.payload, summary, gi), offset: rec.offset, base: first, skip, at: summary.at });
      });
    }
    const out = new Map<string, ScanUnit[]>();
    for (const u of byDs.values()) {
      let list = out.get(u.repo);
      if (list === undefined) out.set(u.repo, (list = []));
      list.push({ kind: 'mem', partition: gap.partition, tags: u.tags, parts: u.parts, hw: null });
    }
    return out;
  }
}
