export { RetentionService, raiseRetentionBounds, type RetentionDeps, type SweepReport } from './retention-service.js';
export { effectiveRetention, oldestToFree, pastRetention, retentionBound, DAY_MS, GB, type SegmentStat } from './policy.js';
export { IngestCounter } from './ingest-counter.js';
