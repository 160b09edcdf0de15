/**
 * The global events of a repository's data lifecycle: its retention limits and its automatic
 * searching flag. Each event carries the whole new value, so applying it is a plain assignment.
 */

/** How long a repository keeps its data; null: no limit of that kind. */
export interface RetentionSettings {
  /** Days: a segment whose newest event is older than this is deleted. */
  timeDays: number | null;
  /** Gigabytes of ingested (uncompressed) data kept at most, oldest deleted first. */
  ingestGb: number | null;
  /** Gigabytes of stored (compressed) segment bytes kept at most, oldest deleted first. */
  storageGb: number | null;
}

export const NO_RETENTION: RetentionSettings = Object.freeze({ timeDays: null, ingestGb: null, storageGb: null });

export type LifecycleEvent =
  | { type: 'RepositoryRetentionSet'; id: string; retention: RetentionSettings }
  | { type: 'RepositoryAutomaticSearchSet'; id: string; automaticSearch: boolean }
  /**
   * Retention decided once for the whole cluster: every segment of repository `id` whose newest
   * event is older than `before` (epoch ms) is past retention, on every node that holds one, now
   * or when it next starts. Proposed by any node whose catalog holds such segments
   * (retention/policy.ts `retentionBound`); the bound only rises, so the highest proposal wins.
   */
  | { type: 'RetentionBoundRaised'; id: string; before: number; at: number };
