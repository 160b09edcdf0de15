/**
 * Heap tuning: the node's V8 flags, each applied only when the operator did not give it already
 * on the node's command line (in either spelling of the name).
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { HEAP_GROWING_PERCENT, heapFlags } from '../../../src/lib/heap-tuning.js';

const tuned = `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;

t.test('applied when the process was not given the flag', async (t) => {
  t.strictSame(heapFlags([]), [tuned]);
  t.strictSame(heapFlags(['--enable-source-maps', '--max-old-space-size=4096']), [tuned], 'other flags do not count');
  t.strictSame(heapFlags(['heap-growing-percent=50']), [tuned], 'not a flag without its dashes');
});

t.test("the operator's value wins, in either spelling", async (t) => {
  t.strictSame(heapFlags(['--heap-growing-percent=50']), []);
  t.strictSame(heapFlags(['--trace-gc', '--heap_growing_percent=50']), [], 'underscores');
  t.strictSame(heapFlags(['--heap-growing-percent']), [], 'without a value');
});

t.test('tuneHeap sets flags V8 knows, in a real process, and reports them', async (t) => {
  // The built module (npm test builds first), as `logsvc node` runs it.
  const url = new URL('../../../dist/lib/heap-tuning.js', import.meta.url).href;
  const run = (execArgv: string[]): { flags: string[]; stderr: string } => {
    const r = spawnSync(process.execPath, [...execArgv, '--input-type=module', '-e', `const m = await import(${JSON.stringify(url)}); console.log(JSON.stringify(m.tuneHeap()))`], {
      env: { ...process.env, NODE_OPTIONS: '' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    t.equal(r.status, 0, r.stderr);
    return { flags: JSON.parse(r.stdout.trim()) as string[], stderr: r.stderr };
  };
  const plain = run([]);
  t.strictSame(plain.flags, [tuned]);
  // V8 reports a flag it does not know on stderr ("unrecognized flag") and goes on.
  t.equal(plain.stderr, '', 'V8 accepted the flag');
  t.strictSame(run(['--heap-growing-percent=120']).flags, [], "the command line's value kept");
});

t.test('the growth adapts to the live heap: 400 % while small, a fixed slack past it, never below the floor', async (t) => {
  const { growingPercentFor, HEAP_SLACK_BYTES, HEAP_GROWING_PERCENT, MIN_HEAP_GROWING_PERCENT } = await import('../../../src/lib/heap-tuning.js');
  t.equal(growingPercentFor(20 * 1024 * 1024), HEAP_GROWING_PERCENT, 'a small heap keeps the ingest tuning');
  t.equal(growingPercentFor(HEAP_SLACK_BYTES / 4), HEAP_GROWING_PERCENT);
  t.equal(growingPercentFor(HEAP_SLACK_BYTES), 100, 'garbage allowed = the slack');
  t.equal(growingPercentFor(2 * HEAP_SLACK_BYTES), 50);
  t.equal(growingPercentFor(100 * HEAP_SLACK_BYTES), MIN_HEAP_GROWING_PERCENT);
});
