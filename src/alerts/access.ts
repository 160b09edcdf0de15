/**
 * Who may see and change a repository's alerts and actions: its members and root (an alert is a
 * query over the repository's data, which members may run anyway). Ingest tokens may not.
 * Non-members get the same "not found" as for a missing repository, so names do not leak.
 */
import { requireUser, visibleRepository, type Principal } from '../auth/index.js';
import type { GlobalState, Repository } from '../global/index.js';

export function memberRepository(state: GlobalState, p: Principal, repositoryName: string, action: string): Repository {
  requireUser(p, action);
  return visibleRepository(state, p, repositoryName);
}
