/**
 * Upgrading over an undigested queue: a data dir left by an older build after `kill -9`, whose
 * digest queue still holds acknowledged events as record version 1 (test/fixtures/upgrade-v1-queue
 * says how it was made). A node of this build replays them: every event comes back exactly once
 * over HTTP with its text, fields and tags, from memory and, after a restart, from the segments
 * the replay wrote, with the same ids.
 */
import t, { type Test } from 'tap';
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startNode, tempDir, type TestNode } from '../helpers/node-process.js';
import { queryJson } from '../helpers/query.js';

t.setTimeout(120_000);

const FIXTURE = fileURLToPath(new URL('../fixtures/upgrade-v1-queue/node-data', import.meta.url));
const T0 = Date.parse('2026-11-01T00:00:00Z');
const CONFIG = ['[digest]', 'flush_block_seconds = 1', 'partitions = 2', ''].join('\n');

type Row = Record<string, string>;

async function allEvents(node: TestNode): Promise<Row[]> {
  return (await queryJson(node.url, 'upgrade', { queryString: 'tail(1000)', start: T0 - 86_400_000 }, { token: node.adminToken })) as Row[];
}

/** Checks the 251 events the fixture's three requests carried; returns their ids by key. */
function checkEvents(t: Test, rows: Row[], when: string): Map<string, string> {
  t.equal(rows.length, 251, `${when}: 150 structured + 100 unstructured + 1 raw events`);
  const ids = new Map<string, string>();
  const once = (key: string, row: Row): void => {
    if (ids.has(key)) t.fail(`${when}: ${key} came back twice`);
    ids.set(key, row['@id']!);
  };
  let bad = 0;
  for (const row of rows) {
    if (row['@rawstring'] === 'a raw line from before the upgrade') {
      once('raw', row);
    } else if (row['#type'] === 'kv') {
      const n = Number(row.n);
      once(`u${n}`, row);
      const ok = row.msg === `unstructured ${n}` && row.source === 'app' && row['@rawstring'] === `2026-11-01T01:00:${String(n % 60).padStart(2, '0')}Z n=${n} msg="unstructured ${n}"`;
      if (!ok && bad++ < 3) t.comment(`wrong: ${JSON.stringify(row)}`);
    } else if (row.kind === 'structured') {
      const i = Number(row.i);
      once(`s${i}`, row);
      const ok =
        row['@rawstring'] === `upgrade structured ${i} héllo ✓` &&
        row['nested.a'] === String(i % 3) &&
        row['#host'] === (i < 100 ? 'web-1' : 'web-2') &&
        Number(row['@timestamp']) === T0 + i * 1000 &&
        (i === 7) === (Object.hasOwn(row, '__proto__') && row.__proto__ === ('own field' as unknown));
      if (!ok && bad++ < 3) t.comment(`wrong: ${JSON.stringify(row)}`);
    } else {
      bad++;
      t.comment(`unexpected event: ${JSON.stringify(row)}`);
    }
  }
  t.equal(bad, 0, `${when}: every event has the text, fields and tags it was sent with`);
  t.equal(ids.size, 251, `${when}: each event once`);
  return ids;
}

t.test('version 1 records in the queue are replayed by this build, each event exactly once', async (t) => {
  const dataDir = join(await tempDir(t), 'data');
  await cp(FIXTURE, dataDir, { recursive: true });
  const node = await startNode(t, { dataDir, config: CONFIG });
  const first = checkEvents(t, await allEvents(node), 'after the upgrade');
  t.equal(await node.stop(), 0, 'a clean stop writes the replayed events to segments');

  const again = await startNode(t, { dataDir, config: CONFIG });
  const second = checkEvents(t, await allEvents(again), 'after a restart');
  t.strictSame([...second].sort(), [...first].sort(), 'the same events with the same ids');
  await again.stop();
});
