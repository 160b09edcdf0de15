/** The per-event and per-request bounds of ingest, from the [ingest] config section; tag bounds are fixed. */
export interface IngestLimits {
  maxEventsPerRequest: number;
  maxEventBytes: number;
  maxFieldsPerEvent: number;
  maxJsonDepth: number;
}

export const MAX_TAGS_PER_EVENT = 64;
export const MAX_TAG_VALUE_CHARS = 1024;

/**
 * Longest field name stored, in characters (UTF-16 units). A longer name's field is not stored (its
 * text stays in @rawstring). A bound, not a style rule: V8 hashes strings past 16,383 characters by
 * their length alone, so an event of many long names with a shared prefix made every field
 * lookup compare whole names: a 2 MB key over 1,000 members took minutes of CPU from a 4 KB gzip.
 */
export const MAX_FIELD_NAME_CHARS = 4096;
