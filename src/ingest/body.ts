/**
 * Request bodies of ingest endpoints: Content-Encoding gzip or deflate (or none), decompressed with a
 * hard cap on the output so that a small body cannot expand into gigabytes (a 1000:1 bomb stops at
 * the cap with 413); then UTF-8 text.
 */
import { gunzip, inflate, type InputType, type ZlibOptions } from 'node:zlib';
import { LogsvcError } from '../lib/errors.js';

type Inflater = (buf: InputType, opts: ZlibOptions, cb: (err: Error | null, out: Buffer) => void) => void;

function run(fn: Inflater, body: Buffer, cap: number, encoding: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    fn(body, { maxOutputLength: cap }, (err, out) => {
      if (err === null) return resolve(out);
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ERR_BUFFER_TOO_LARGE') return reject(new LogsvcError('E_BODY_TOO_LARGE', `${encoding} request body decompresses to more than the limit of ${cap} bytes`));
      reject(new LogsvcError('E_BAD_REQUEST', `request body is not valid ${encoding} data (${err.message})`));
    });
  });
}

export async function decodeBody(body: Buffer, contentEncoding: string | undefined, cap: number): Promise<Buffer> {
  const enc = (contentEncoding ?? '').trim().toLowerCase();
  if (enc === '' || enc === 'identity') return body;
  if (enc === 'gzip' || enc === 'x-gzip') return run(gunzip as Inflater, body, cap, 'gzip');
  if (enc === 'deflate') return run(inflate as Inflater, body, cap, 'deflate');
  throw new LogsvcError('E_UNSUPPORTED_MEDIA_TYPE', `Content-Encoding "${enc.slice(0, 50)}" is not supported; use gzip, deflate or none`);
}
