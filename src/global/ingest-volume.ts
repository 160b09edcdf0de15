/**
 * Ingest volume per repository in global state: the bytes and events each node put in the digest
 * queue for a repository, per UTC day, summed over the nodes (each node reports its counts with
 * RepositoryIngestCounted; src/retention/ingest-counter.ts). Days older than KEPT_DAYS before the
 * newest day reported are forgotten, so the state stays small.
 */

export const KEPT_DAYS = 31;
export const DAY_MS = 86_400_000;

export interface IngestDay {
  /** Days since the epoch (UTC). */
  day: number;
  bytes: number;
  events: number;
}

export interface IngestCount {
  repositoryId: string;
  bytes: number;
  events: number;
}

export type IngestVolumeEvent = { type: 'RepositoryIngestCounted'; node: number; day: number; counts: IngestCount[] };

export type IngestVolumeSnapshot = { repositoryId: string; days: IngestDay[] }[];

export class IngestVolumeIndex {
  /** repository id -> day -> totals. */
  private readonly byRepo = new Map<string, Map<number, IngestDay>>();
  private newestDay = 0;

  apply(e: IngestVolumeEvent): void {
    for (const c of e.counts) {
      let days = this.byRepo.get(c.repositoryId);
      if (days === undefined) this.byRepo.set(c.repositoryId, (days = new Map()));
      const d = days.get(e.day);
      if (d === undefined) days.set(e.day, { day: e.day, bytes: c.bytes, events: c.events });
      else {
        d.bytes += c.bytes;
        d.events += c.events;
      }
    }
    if (e.day > this.newestDay) {
      this.newestDay = e.day;
      for (const days of this.byRepo.values()) for (const day of days.keys()) if (day <= e.day - KEPT_DAYS) days.delete(day);
    }
  }

  get isEmpty(): boolean {
    return this.byRepo.size === 0;
  }

  /** A repository's days, newest first. */
  of(repositoryId: string): IngestDay[] {
    return [...(this.byRepo.get(repositoryId)?.values() ?? [])].sort((a, b) => b.day - a.day).map((d) => ({ ...d }));
  }

  dropRepository(repositoryId: string): void {
    this.byRepo.delete(repositoryId);
  }

  toSnapshot(): IngestVolumeSnapshot {
    return [...this.byRepo].map(([repositoryId, days]) => ({ repositoryId, days: [...days.values()].map((d) => ({ ...d })) }));
  }

  static fromSnapshot(s: IngestVolumeSnapshot | undefined): IngestVolumeIndex {
    const idx = new IngestVolumeIndex();
    for (const r of s ?? []) {
      idx.byRepo.set(r.repositoryId, new Map(r.days.map((d) => [d.day, { ...d }])));
      for (const d of r.days) if (d.day > idx.newestDay) idx.newestDay = d.day;
    }
    return idx;
  }
}
