export { RetentionService, type RetentionDeps, type SweepReport } from './retention-service.js';
export { effectiveRetention, oldestToFree, pastRetention, DAY_MS, GB, type SegmentStat } from './policy.js';
