/** RFC 6587 framing of syslog over TCP (src/ingest/listeners/framing.ts): both framings, any chunking, the bounds. */
import t from 'tap';
import { TcpFramer } from '../../../src/ingest/listeners/framing.js';

const texts = (bufs: Buffer[]) => bufs.map((b) => b.toString());

t.test('octet counting and newline framing mixed, in one chunk and byte by byte', async (t) => {
  const m1 = '<34>1 2026-11-01T10:00:00Z h app - - - with\nnewline inside';
  const body = `${Buffer.byteLength(m1)} ${m1}<13>plain one\n<13>crlf two\r\n\n<13>tail`;
  const whole = new TcpFramer(1024);
  t.same([...texts(whole.push(Buffer.from(body))), ...texts(whole.end())], [m1, '<13>plain one', '<13>crlf two', '<13>tail']);
  const bytes = new TcpFramer(1024);
  const out: string[] = [];
  for (const b of Buffer.from(body)) out.push(...texts(bytes.push(Buffer.from([b]))));
  out.push(...texts(bytes.end()));
  t.same(out, [m1, '<13>plain one', '<13>crlf two', '<13>tail'], 'the same messages whatever the chunking');
});

t.test('multi-byte UTF-8 counted in bytes', async (t) => {
  const m = '<13>ünïcødé ✓';
  const f = new TcpFramer(1024);
  t.same(texts(f.push(Buffer.from(`${Buffer.byteLength(m)} ${m}`))), [m]);
});

t.test('bounds', async (t) => {
  const f = new TcpFramer(480);
  const long = `<13>${'x'.repeat(2000)}`;
  const out = f.push(Buffer.from(`${long}\n<13>next\n`));
  t.equal(out[0]!.length, 480, 'a long newline-framed message is cut');
  t.equal(out[1]!.toString(), '<13>next', 'and the next one is intact');
  t.equal(f.truncated, 1);
  const g = new TcpFramer(480);
  const first = g.push(Buffer.from(`<13>${'y'.repeat(1000)}`));
  t.equal(first[0]!.length, 480, 'cut before its LF arrives: memory stays bounded');
  t.same(texts(g.push(Buffer.from(`${'y'.repeat(100)}\n<13>after\n`))), ['<13>after'], 'the rest up to the LF is discarded');
  t.throws(() => new TcpFramer(480).push(Buffer.from('481 <13>x')), { message: /more than 480 bytes/ }, 'an octet count above the bound');
  t.throws(() => new TcpFramer(480).push(Buffer.from('12x <13>x')), { message: /not followed by a space/ }, 'a count not followed by a space');
  t.same(new TcpFramer(480).end(), [], 'nothing left: nothing');
});
