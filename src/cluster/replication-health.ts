/** The `replication` health check: segments held by too few live nodes, and how far replication lags. */
import type { CheckResult } from '../health/checks.js';
import type { ReplicationStats } from './replication.js';

/** Own segments may wait this long for their copies before the check warns. */
const LAG_WARN_MS = 5 * 60_000;

export function replicationCheck(r: ReplicationStats): CheckResult {
  const fields = {
    factor: String(r.factor),
    segments: String(r.segments),
    underReplicated: String(r.underReplicated),
    missing: String(r.missing),
    pendingOwn: String(r.pendingOwn),
    lagSeconds: String(Math.round(r.lagMs / 1000)),
    transfersActive: String(r.active),
    transfersQueued: String(r.queued),
    corruptCopiesReplaced: String(r.corrupt),
  };
  const problems: string[] = [];
  if (r.underReplicated > 0) problems.push(`${r.underReplicated} of ${r.segments} segments are held by fewer than ${r.factor} live nodes${r.missing > 0 ? ` (${r.missing} by none)` : ''}`);
  if (r.lagMs > LAG_WARN_MS) problems.push(`the oldest segment waiting for copies is ${Math.round(r.lagMs / 1000)} s old`);
  return { name: 'replication', status: problems.length === 0 ? 'OK' : 'WARN', statusMessage: problems.length === 0 ? `every segment is held by ${r.factor} live nodes` : problems.join('; '), fields };
}
