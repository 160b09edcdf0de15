/**
 * A bounded window of recent latency samples with percentile summaries. Feeds the
 * `event-latency-p99` health check. Memory is fixed (a ring of `capacity` numbers); samples older
 * than `maxAgeMs` drop out of summaries.
 */
import type { Clock } from './clock.js';

export interface LatencySummary {
  size: number;
  min: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export class LatencyWindow {
  private readonly values: Float64Array;
  private readonly times: Float64Array;
  /** Reused by summary(): the live values, sorted in place (a fresh array per call was garbage the HTTP thread's GC had to collect). */
  private readonly scratch: Float64Array;
  private next = 0;
  private filled = 0;

  constructor(
    private readonly clock: Clock,
    capacity = 4096,
    private readonly maxAgeMs = 5 * 60_000,
  ) {
    this.values = new Float64Array(capacity);
    this.times = new Float64Array(capacity);
    this.scratch = new Float64Array(capacity);
  }

  record(latencyMs: number): void {
    this.values[this.next] = latencyMs;
    this.times[this.next] = this.clock.now();
    this.next = (this.next + 1) % this.values.length;
    if (this.filled < this.values.length) this.filled++;
  }

  summary(): LatencySummary {
    const cutoff = this.clock.now() - this.maxAgeMs;
    let n = 0;
    for (let i = 0; i < this.filled; i++) {
      if (this.times[i]! >= cutoff) this.scratch[n++] = this.values[i]!;
    }
    if (n === 0) return { size: 0, min: 0, p50: 0, p95: 0, p99: 0, max: 0 };
    const live = this.scratch.subarray(0, n);
    live.sort();
    const at = (q: number): number => live[Math.min(n - 1, Math.ceil(q * n) - 1)]!;
    return { size: n, min: live[0]!, p50: at(0.5), p95: at(0.95), p99: at(0.99), max: live[n - 1]! };
  }
}
