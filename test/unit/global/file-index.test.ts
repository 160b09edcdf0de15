import t from 'tap';
import { FileIndex } from '../../../src/global/files.js';

const stored = (scope: string, name: string, contentHash: string, size: number) => ({ type: 'FileStored' as const, scope, name, contentHash, size, rows: 1, at: 1 });

t.test('references and distinct bytes follow stores, replaces, removals and dropped scopes', async (t) => {
  const ix = new FileIndex();
  ix.apply(stored('r1', 'a.csv', 'h1', 100));
  ix.apply(stored('r2', 'b.csv', 'h1', 100));
  ix.apply(stored('', 'c.csv', 'h2', 50));
  t.equal(ix.totalBytes, 150, 'a content shared by two names counts once');
  t.ok(ix.referenced('h1') && ix.referenced('h2'));
  ix.apply({ type: 'FileRemoved', scope: 'r1', name: 'a.csv' });
  t.ok(ix.referenced('h1'), 'still referenced by r2');
  t.equal(ix.totalBytes, 150);
  ix.apply(stored('r2', 'b.csv', 'h3', 30));
  t.notOk(ix.referenced('h1'), 'a replace releases the old content');
  t.equal(ix.totalBytes, 80);
  ix.apply(stored('r2', 'b.csv', 'h3', 30));
  t.equal(ix.totalBytes, 80, 'storing the same content again changes nothing');
  t.ok(ix.referenced('h3'));
  ix.dropScope('r2');
  t.notOk(ix.referenced('h3'), 'a deleted repository releases its contents');
  t.equal(ix.totalBytes, 50);
  ix.apply({ type: 'FileRemoved', scope: 'nowhere', name: 'x.csv' });
  t.equal(ix.totalBytes, 50, 'removing what is not there changes nothing');
  const copy = FileIndex.fromSnapshot(ix.all());
  t.equal(copy.totalBytes, 50, 'rebuilt from a snapshot');
  t.ok(copy.referenced('h2'));
});
