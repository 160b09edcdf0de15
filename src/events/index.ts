export type { IngestEvent, EventGroup } from './event.js';
export { datasourceId, canonicalTags } from './datasource.js';
export {
  encodeRecord,
  assembleRecord,
  MAX_SECTION_STRINGS,
  sectionTooLarge,
  type EncodedGroup,
  decodeRecord,
  readSummary,
  groupSection,
  decodeGroupEvents,
  decodeGroupColumns,
  type GroupColumns,
  RECORD_VERSION,
  type IngestRecord,
  type RecordGroup,
  type RecordSummary,
  type GroupSummary,
} from './record.js';
export { eventId, parseEventId } from './event-id.js';
