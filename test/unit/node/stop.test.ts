/** The bounded stop (src/node/stop.ts): a step that hangs or fails is left behind and named; the rest still run. */
import t from 'tap';
import { createLogger } from '../../../src/lib/logger.js';
import { runStopSteps, stopStep } from '../../../src/node/stop.js';

t.test('a hanging step is cut at its bound, a failing one is reported, later steps still run', async (t) => {
  const lines: string[] = [];
  const ran: string[] = [];
  const report = await runStopSteps(
    [
      stopStep('hangs', () => new Promise<void>(() => undefined), 200),
      stopStep('fails', () => {
        throw new Error('boom');
      }),
      stopStep('lock', () => void ran.push('lock')),
    ],
    createLogger('debug', (l) => lines.push(l)),
  );
  t.equal(report.clean, false);
  t.same(ran, ['lock'], 'the steps after a hung one run');
  t.match(report.problems[0], /^hangs: still running after its bound of 200 ms/);
  t.match(report.problems[1], /^fails: failed: boom/);
  t.ok(report.ms < 5_000, `the stop ended at the hung step's bound (${report.ms} ms)`);
});

t.test('past the whole limit the remaining steps are skipped', async (t) => {
  const report = await runStopSteps([stopStep('slow', () => new Promise<void>(() => undefined), 10_000), stopStep('next', () => undefined)], createLogger('error', () => undefined), 300);
  t.match(report.problems, [/^slow: still running after its bound of 300 ms/, /^next: skipped, the stop had used its 300 ms/]);
});

t.test('a clean stop says so', async (t) => {
  const report = await runStopSteps([stopStep('a', async () => undefined)], createLogger('error', () => undefined));
  t.same(report, { clean: true, ms: report.ms, problems: [] });
});
