export { QueryExecutor, QueryRun, bytesInRange, MISSING_SEGMENTS_WARNING, type EventSources, type ScanRunner, type QueryOutcome, type PeerScans } from './executor.js';
export { QueryService, parseQueryRequest, type QueryRequest, type Repo, type LiveSource } from './query-service.js';
export { QueryJobRegistry, type PollResponse } from './query-jobs.js';
export { toJsonRow, toTextLine, type ResultRow } from './results.js';
export { runScanTask, type ScanTask, type ScanResult } from './scan.js';
export { NodeQueryMemory } from './memory.js';
export type { Ev } from './runtime.js';
