import t from 'tap';
import { readMultipartFile, MAX_PARTS } from '../../../src/files/index.js';
import { multipartBody } from '../../helpers/files.js';

const read = (parts: Parameters<typeof multipartBody>[0], max = 1000) => {
  const m = multipartBody(parts);
  return readMultipartFile(m.contentType, m.body, max);
};

t.test('the part named "file" is the upload; its name is kept exactly as sent', async (t) => {
  const got = await read([{ name: 'note', content: 'x' }, { name: 'file', fileName: '../a.csv', content: 'k,v\n1,2\n' }]);
  t.equal(got.fileName, '../a.csv', 'not cut to a.csv: the name check refuses it later');
  t.equal(got.bytes.toString(), 'k,v\n1,2\n');
});

t.test('refusals name the problem', async (t) => {
  await t.rejects(read([{ name: 'note', content: 'x' }]), { code: 'E_VALIDATION', message: /no part named "file"/ });
  await t.rejects(read([{ name: 'upload', fileName: 'a.csv', content: 'x' }]), { code: 'E_VALIDATION', message: /part named "file"/ });
  await t.rejects(read([{ name: 'file', fileName: 'a.csv', content: 'x'.repeat(2000) }]), { code: 'E_BODY_TOO_LARGE' });
  await t.rejects(read([{ name: 'file', fileName: 'a.csv', content: 'x' }, { name: 'file', fileName: 'b.csv', content: 'y' }]), { code: 'E_VALIDATION', message: /more than one file/ });
  await t.rejects(read(Array.from({ length: 3000 }, (_, i) => ({ name: `f${i}`, content: 'x' }))), { code: 'E_VALIDATION', message: new RegExp(`more than ${MAX_PARTS}`) });
  await t.rejects(readMultipartFile('text/csv', Buffer.from('a,b'), 1000), { code: 'E_UNSUPPORTED_MEDIA_TYPE' });
  await t.rejects(readMultipartFile('multipart/form-data; boundary=zz', Buffer.from('garbage without a boundary'), 1000), LogsvcErrorLike);
});

const LogsvcErrorLike = { code: /^E_(BAD_REQUEST|VALIDATION)$/ };
