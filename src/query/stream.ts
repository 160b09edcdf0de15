/**
 * A filter query streamed whole (the synchronous `/query` endpoint, api-facts §1.3: "events are
 * streamed as they are found"): instead of the implicit `tail(200)`, the query ends in this
 * collector. A scan task's partial state is the matching events of that task (charged to the
 * query's memory budget while kept); the coordinator hands each partial to the run's sink as it
 * arrives instead of merging it, and the sink writes it to the client, waiting while the client is
 * slower than the scan (so at most the partials of the tasks in flight are held).
 */
import { chargeKept, pairsBytes } from './memory.js';
import { entriesOf, MapEvent, type Aggregator, type Ev } from './runtime.js';

export interface StreamState {
  /** Matching events as [name, value] pairs, in scan order. */
  rows: [string, string][][];
}

export const STREAM_STAGE = 'stream';

/** The collector a streamed filter query ends in. */
export function streamAggregator(): Aggregator<StreamState> {
  return {
    name: STREAM_STAGE,
    init: () => ({ rows: [] }),
    add(st, e) {
      const pairs = entriesOf(e);
      chargeKept(pairsBytes(pairs));
      st.rows.push(pairs);
    },
    // A cluster peer merges its own tasks' partials into the one it answers with.
    merge(into, other) {
      for (const r of other.rows) {
        chargeKept(pairsBytes(r));
        into.rows.push(r);
      }
    },
    finish: (st) => streamedRows(st),
  };
}

/** The events of a partial state, newest first (a task's blocks are read in storage order). */
export function streamedRows(state: unknown): Ev[] {
  const rows = (state as StreamState).rows.map((pairs) => new MapEvent(pairs));
  const ts = rows.map((r) => r.timestamp());
  const order = rows.map((_, i) => i).sort((a, b) => (ts[b]! - ts[a]!) || 0);
  return order.map((i) => rows[i]!);
}
