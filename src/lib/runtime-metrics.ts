/**
 * Process metrics for operators and the benchmark harness: memory and event-loop delay (a
 * perf_hooks histogram sampling every 20 ms; cheap enough to run always).
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

/** How often the event loop's delay is sampled (also prom-client's lag metrics, metrics/prometheus.ts). */
export const EVENT_LOOP_SAMPLE_MS = 20;
const RESOLUTION_MS = EVENT_LOOP_SAMPLE_MS;

export interface RuntimeMetrics {
  rss: number;
  heapUsed: number;
  eventLoopDelay: { p50: number; p99: number; max: number; mean: number };
}

export class RuntimeMonitor {
  private readonly h: IntervalHistogram;

  constructor() {
    this.h = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    this.h.enable();
  }

  /** Current values; `reset` starts a new event-loop-delay window. */
  read(reset = false): RuntimeMetrics {
    const mem = process.memoryUsage();
    // The histogram records whole sampling intervals: subtract the interval to get the delay.
    const ms = (ns: number): number => Math.max(0, Math.round(ns / 1e4) / 100 - RESOLUTION_MS);
    const out = {
      rss: mem.rss,
      heapUsed: mem.heapUsed,
      eventLoopDelay: { p50: ms(this.h.percentile(50)), p99: ms(this.h.percentile(99)), max: ms(this.h.max), mean: ms(this.h.mean) },
    };
    if (reset) this.h.reset();
    return out;
  }

  stop(): void {
    this.h.disable();
  }
}
