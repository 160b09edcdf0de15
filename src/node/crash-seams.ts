/** The crash tests' kill -9 points, named by environment variables (unset in production). */
import { DELETION_STEPS, type DeletionStep } from '../segments/deletions.js';
import type { RewriteStep } from '../segments/rewrites.js';

/**
 * Test seam for the crash tests: LOGSVC_TEST_CRASH_REWRITE names a step of a segment rewrite after
 * which the node kills itself with SIGKILL (segments/rewrites.ts). Unset in production.
 */
export function rewriteCrashStep(): RewriteStep | null {
  const v = process.env.LOGSVC_TEST_CRASH_REWRITE;
  return v === 'intent' || v === 'written' || v === 'swapped' || v === 'unlinked' ? v : null;
}

/**
 * Test seam for the crash tests: LOGSVC_TEST_CRASH_DELETION names a step of a segment deletion after
 * which the node kills itself with SIGKILL (segments/deletions.ts). Unset in production.
 */
export function deletionCrashStep(): DeletionStep | null {
  const v = process.env.LOGSVC_TEST_CRASH_DELETION;
  return DELETION_STEPS.find((s) => s === v) ?? null;
}
