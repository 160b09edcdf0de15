/**
 * The plain `logsvc node` command line read without yargs (src/cli/main.ts plainNodeArgs), and the
 * start-up memory settings applied before the node's modules load (src/lib/native-allocators.ts).
 * Everything plainNodeArgs does not take goes to yargs, whose messages test/integration/cli.test.ts checks.
 */
import t from 'tap';
import { plainNodeArgs } from '../../../src/cli/main.js';
import { MIMALLOC_ENV, settleNativeAllocators } from '../../../src/lib/native-allocators.js';
import { holdYoungGeneration } from '../../../src/lib/heap-tuning.js';

t.test('plain node command lines are read here', async (t) => {
  t.strictSame(plainNodeArgs(['node']), { config: undefined, host: undefined, port: undefined, 'data-dir': undefined });
  t.strictSame(plainNodeArgs(['node', '--config', 'a.toml', '--host', '127.0.0.1', '--port', '0', '--data-dir', '/d']), { config: 'a.toml', host: '127.0.0.1', port: 0, 'data-dir': '/d' });
  t.strictSame(plainNodeArgs(['node', '--port=8080', '--data-dir=/x']), { config: undefined, host: undefined, port: 8080, 'data-dir': '/x' }, '--flag=value');
  t.equal(plainNodeArgs(['node', '--port', '99999'])?.port, 99999, 'out of range is the config check\'s problem (node.port)');
});

t.test('everything else goes to yargs', async (t) => {
  for (const args of [[], ['config', 'check'], ['node', '--help'], ['node', '--version'], ['node', '--frobnicate'], ['node', 'extra'], ['node', '--port', 'abc'], ['node', '--port', '1.5'], ['node', '--port'], ['segments', 'verify', '/d']]) {
    t.equal(plainNodeArgs(args), null, JSON.stringify(args));
  }
});

t.test('native allocator settings: set when absent, the operator\'s own kept', async (t) => {
  const env: NodeJS.ProcessEnv = {};
  t.strictSame(settleNativeAllocators(env).sort(), Object.keys(MIMALLOC_ENV).sort());
  t.strictSame(env, MIMALLOC_ENV);
  const own: NodeJS.ProcessEnv = { MIMALLOC_ALLOW_THP: '1' };
  t.strictSame(settleNativeAllocators(own), ['MIMALLOC_ALLOW_LARGE_OS_PAGES']);
  t.equal(own.MIMALLOC_ALLOW_THP, '1', 'an operator\'s value wins');
});

t.test('the young-generation hold: a no-op when the operator sizes the new space', async (t) => {
  for (const flag of ['--semi-space-growth-factor=3', '--max-semi-space-size=4', '--min_semi_space_size=2']) {
    const release = holdYoungGeneration([flag]);
    t.type(release, 'function', flag);
    release();
  }
  // Without such a flag the hold is applied and released (V8 accepts both values); twice is harmless.
  const release = holdYoungGeneration([]);
  release();
  release();
  t.pass('applied and released');
});
