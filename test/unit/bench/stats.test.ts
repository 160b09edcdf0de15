import t from 'tap';
// @ts-expect-error the benchmarks are plain JavaScript modules without declarations
import { slope } from '../../../bench/lib/stats.mjs';

const fit = slope as (xs: readonly number[], ys: readonly number[]) => number | null;

t.test('slope: the least-squares rate of change', async (t) => {
  t.equal(fit([0, 1, 2, 3], [10, 12, 14, 16]), 2, 'an exact line');
  t.equal(fit([0, 1, 2], [5, 5, 5]), 0, 'flat');
  t.equal(fit([0, 1, 2, 3], [9, 6, 3, 0]), -3, 'falling');
  // A sawtooth around a rising line keeps the line's slope (10 per step, teeth of ±4).
  const xs = Array.from({ length: 20 }, (_, i) => i);
  t.ok(Math.abs(fit(xs, xs.map((x) => 10 * x + (x % 2 === 0 ? 4 : -4)))! - 10) < 0.2, 'noise around a line');
});

t.test('slope: null when it cannot be told', async (t) => {
  t.equal(fit([], []), null);
  t.equal(fit([1, 2], [1, 2]), null, 'two points are not a trend');
  t.equal(fit([3, 3, 3], [1, 2, 3]), null, 'no spread in time');
});
