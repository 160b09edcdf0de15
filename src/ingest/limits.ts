/** The per-event and per-request bounds of ingest, from the [ingest] config section; tag bounds are fixed. */
export interface IngestLimits {
  maxEventsPerRequest: number;
  maxEventBytes: number;
  maxFieldsPerEvent: number;
  maxJsonDepth: number;
}

export const MAX_TAGS_PER_EVENT = 64;
export const MAX_TAG_VALUE_CHARS = 1024;
