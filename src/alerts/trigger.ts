/**
 * What one trigger of an alert hands to its actions: the alert, the query window as resolved, the
 * result rows (as the query API renders them: string values, a numeric @timestamp), capped at
 * `alerts.max_message_events`, with the full count kept for {event_count}.
 */
import type { ResultRow } from '../query/index.js';

export interface TriggerContext {
  alertId: string;
  alertName: string;
  description: string;
  queryString: string;
  /** The alert's relative start as written ("10m"). */
  queryStart: string;
  /** Its relative end ("now" but for scheduled searches with an offset). */
  queryEnd?: string | undefined;
  /** What triggered (`@trigger.type`): an alert of any kind, or a scheduled search. */
  triggerType?: 'alert' | 'scheduled-search' | undefined;
  repositoryName: string;
  triggeredAt: number;
  /** The resolved window, epoch ms. */
  startMs: number;
  endMs: number;
  /** The rows given to actions (at most max_message_events of them). */
  rows: ResultRow[];
  /** Rows the trigger had in all. */
  eventCount: number;
  warnings: string[];
  /** Link to the alert's query in this service. */
  url: string;
}

/** One action's invocation within a trigger. */
export interface Invocation {
  actionId: string;
  /** Unique per action call, shared by its retries. */
  invocationId: string;
}

/** The link {url} renders: the repository's search page with the alert's query and window. */
export function searchUrl(baseUrl: string, repositoryName: string, queryString: string, queryStart: string): string {
  const q = new URLSearchParams({ query: queryString, start: queryStart, live: 'false' });
  return `${baseUrl.replace(/\/+$/, '')}/${encodeURIComponent(repositoryName)}/search?${q.toString()}`;
}
