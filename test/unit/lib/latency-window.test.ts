/**
 * LatencyWindow: nearest-rank percentiles over the live samples of a fixed ring, samples older
 * than the age bound left out, and summaries that leave the ring as it was.
 */
import t from 'tap';
import { LatencyWindow } from '../../../src/lib/latency-window.js';
import { ManualClock } from '../../../src/lib/clock.js';

t.test('nearest-rank percentiles of the samples, whatever order they came in', async (t) => {
  const clock = new ManualClock(1_000_000);
  const w = new LatencyWindow(clock, 1000);
  t.strictSame(w.summary(), { size: 0, min: 0, p50: 0, p95: 0, p99: 0, max: 0 }, 'empty');
  // 1..200 in a scrambled order.
  for (let i = 0; i < 200; i++) w.record(((i * 73) % 200) + 1);
  t.strictSame(w.summary(), { size: 200, min: 1, p50: 100, p95: 190, p99: 198, max: 200 });
  t.strictSame(w.summary(), { size: 200, min: 1, p50: 100, p95: 190, p99: 198, max: 200 }, 'a summary changes nothing');
  w.record(0.5);
  t.equal(w.summary().min, 0.5, 'fractions sort as numbers');
  w.record(1000);
  t.equal(w.summary().max, 1000, 'numerically, not as text (1000 > 200)');
});

t.test('a full ring keeps the newest samples; old samples age out', async (t) => {
  const clock = new ManualClock(1_000_000);
  const w = new LatencyWindow(clock, 4, 10_000);
  for (const v of [50, 60, 70, 80, 1, 2]) w.record(v);
  t.strictSame(w.summary(), { size: 4, min: 1, p50: 2, p95: 80, p99: 80, max: 80 }, 'the two oldest were overwritten');
  clock.advance(5_000);
  w.record(3);
  clock.advance(6_000);
  t.strictSame(w.summary(), { size: 1, min: 3, p50: 3, p95: 3, p99: 3, max: 3 }, 'only the sample of the last 10 s');
  clock.advance(10_000);
  t.equal(w.summary().size, 0, 'all aged out');
});
