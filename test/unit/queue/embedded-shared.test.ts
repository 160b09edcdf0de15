/** The DigestQueue contract (shared-suite.ts) on the embedded queue. */
import t from 'tap';
import { join } from 'node:path';
import { digestQueueSuite } from './shared-suite.js';
import { openQueue, tempDir } from './helpers.js';

digestQueueSuite(t, {
  async open(t, partitions) {
    const dir = join(await tempDir(t), 'queue');
    const { q } = await openQueue(dir, partitions);
    return { q, reopen: async () => (await openQueue(dir, partitions)).q };
  },
});
