export { IngestService, type IngestServiceDeps } from './ingest-service.js';
export { normalizeStructured } from './structured.js';
export { normalizeUnstructured, normalizeRaw } from './unstructured.js';
export type { IngestLimits } from './limits.js';
export { MAX_TAGS_PER_EVENT, MAX_TAG_VALUE_CHARS } from './limits.js';
export { runIngestTask, hasCustomParsers, unwrapIngestResult, prepareRecord, type IngestTask, type IngestTaskResult, type IngestKind } from './pipeline.js';
