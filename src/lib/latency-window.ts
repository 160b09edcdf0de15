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
  private next = 0;
  private filled = 0;

  constructor(
    private readonly clock: Clock,
    capacity = 4096,
    private readonly maxAgeMs = 5 * 60_000,
  ) {
    this.values = new Float64Array(capacity);
    this.times = new Float64Array(capacity);
  }

  record(latencyMs: number): void {
    this.values[this.next] = latencyMs;
    this.times[this.next] = this.clock.now();
    this.next = (this.next + 1) % this.values.length;
    if (this.filled < this.values.length) this.filled++;
  }

  summary(): LatencySummary {
    const cutoff = this.clock.now() - this.maxAgeMs;
    const live: number[] = [];
    for (let i = 0; i < this.filled; i++) {
      if ((this.times[i] ?? 0) >= cutoff) live.push(this.values[i] ?? 0);
    }
    if (live.length === 0) return { size: 0, min: 0, p50: 0, p95: 0, p99: 0, max: 0 };
    live.sort((a, b) => a - b);
    const at = (q: number): number => live[Math.min(live.length - 1, Math.ceil(q * live.length) - 1)] ?? 0;
    return { size: live.length, min: live[0] ?? 0, p50: at(0.5), p95: at(0.95), p99: at(0.99), max: live[live.length - 1] ?? 0 };
  }
}
