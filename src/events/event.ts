/**
 * The event model shared by ingest, the digest queue, segments and (later) queries.
 *
 * An event is its timestamp (ms UTC), its zone, its raw text and its fields (all strings, as in the
 * product: numbers are strings interpreted by context). Tags are not per event: they identify the
 * datasource and travel with the group of events that share them.
 */

export interface IngestEvent {
  timestamp: number;
  timezone: string;
  rawstring: string;
  fields: Record<string, string>;
}

/** Events that share a tag set (and so a datasource). Tag names are stored without the "#". */
export interface EventGroup {
  tags: Record<string, string>;
  events: IngestEvent[];
}
