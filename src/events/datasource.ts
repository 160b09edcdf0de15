/**
 * Datasource identity: a repository plus the exact set of tags. The id is a stable hash of the
 * sorted tag pairs, so every node and every replay derives the same id for the same tags.
 */
import { createHash } from 'node:crypto';

export function canonicalTags(tags: Record<string, string>): [string, string][] {
  return Object.entries(tags).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

export function datasourceId(repositoryId: string, tags: Record<string, string>): string {
  // JSON quoting makes the encoding injective whatever the tag names and values contain.
  return createHash('sha256')
    .update(JSON.stringify([repositoryId, canonicalTags(tags)]))
    .digest('base64url')
    .slice(0, 22);
}
