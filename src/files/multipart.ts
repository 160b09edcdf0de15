/**
 * Reading a `multipart/form-data` upload (busboy's one home): from a body in memory
 * (readMultipartFile), or as it arrives, into a file on disk (receiveMultipartFile: memory follows
 * a chunk, not the file). busboy's own limits bound what a hostile body can make us do: a handful
 * of parts, one file, small headers. The file must be in a part named `file`, as the product and
 * its clients (humioctl, humiolib) send it.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createRequire } from 'node:module';
import type busboy from 'busboy';
import { lazyRequire } from '../lib/lazy-require.js';

/** busboy (and streamsearch) at the first upload: an idle node never holds them. */
const loadBusboy = lazyRequire<typeof busboy>(createRequire(import.meta.url), 'busboy');
import { LogsvcError } from '../lib/errors.js';

/** Parts one upload may have (the file plus a few form fields some clients add). */
export const MAX_PARTS = 16;
const MAX_FIELD_BYTES = 4096;
const MAX_HEADER_PAIRS = 32;

export interface UploadedPart {
  /** The filename the client gave for the part. */
  fileName: string;
  bytes: Buffer;
}

function checkContentType(contentType: string | undefined): asserts contentType is string {
  if (contentType === undefined || !/^multipart\/form-data\s*;/i.test(contentType)) {
    throw new LogsvcError('E_UNSUPPORTED_MEDIA_TYPE', 'a file upload must be multipart/form-data with a part named "file"');
  }
}

function multipartParser(contentType: string, maxFileBytes: number): busboy.Busboy {
  try {
    return loadBusboy()({
      headers: { 'content-type': contentType },
      // The name exactly as sent: a "../x.csv" must be refused, not quietly cut to "x.csv".
      preservePath: true,
      // Header parameters (filename="résumé.csv") as the UTF-8 that curl, browsers and humioctl
      // send; busboy's default reads them as Latin-1 and stored "rÃ©sumÃ©.csv".
      defParamCharset: 'utf8',
      limits: { parts: MAX_PARTS, files: 1, fields: MAX_PARTS, fieldSize: MAX_FIELD_BYTES, fileSize: maxFileBytes, headerPairs: MAX_HEADER_PAIRS },
    });
  } catch (err) {
    throw new LogsvcError('E_BAD_REQUEST', `multipart body: ${(err as Error).message}`);
  }
}

const tooLarge = (maxFileBytes: number): LogsvcError => new LogsvcError('E_BODY_TOO_LARGE', `the uploaded file is larger than the limit of ${maxFileBytes} bytes (files.max_file_bytes)`);
const notNamedFile = (name: string): LogsvcError => new LogsvcError('E_VALIDATION', `multipart part "${name.slice(0, 100)}": the file must be sent in a part named "file"`);

/** The refusals of busboy's limits, and its errors, reported through `fail`. */
function onLimits(bb: busboy.Busboy, fail: (e: LogsvcError) => void): void {
  bb.on('partsLimit', () => fail(new LogsvcError('E_VALIDATION', `multipart body has more than ${MAX_PARTS} parts`)));
  bb.on('filesLimit', () => fail(new LogsvcError('E_VALIDATION', 'multipart body has more than one file; upload one file per request')));
  bb.on('fieldsLimit', () => fail(new LogsvcError('E_VALIDATION', `multipart body has more than ${MAX_PARTS} fields`)));
}

export function readMultipartFile(contentType: string | undefined, body: Buffer, maxFileBytes: number): Promise<UploadedPart> {
  return new Promise<UploadedPart>((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      checkContentType(contentType);
      bb = multipartParser(contentType, maxFileBytes);
    } catch (err) {
      reject(err as LogsvcError);
      return;
    }
    let failed: LogsvcError | null = null;
    let found: UploadedPart | null = null;
    const fail = (e: LogsvcError): void => {
      failed ??= e;
    };
    bb.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (d: Buffer) => {
        size += d.length;
        chunks.push(d);
      });
      stream.on('limit', () => fail(tooLarge(maxFileBytes)));
      stream.on('end', () => {
        if (name !== 'file') {
          fail(notNamedFile(name));
          return;
        }
        found = { fileName: info.filename ?? '', bytes: Buffer.concat(chunks, size) };
      });
    });
    onLimits(bb, fail);
    bb.on('error', (err: Error) => reject(failed ?? new LogsvcError('E_BAD_REQUEST', `multipart body is malformed: ${err.message}`)));
    bb.on('close', () => {
      if (failed !== null) reject(failed);
      else if (found === null) reject(new LogsvcError('E_VALIDATION', 'multipart body has no part named "file"'));
      else resolve(found);
    });
    bb.end(body);
  });
}

/** Bytes of a file's start that receiveMultipartFile's checkHead sees. */
const HEAD_BYTES = 64 * 1024;

/** An upload's file part, received into a file on disk. */
export interface ReceivedFile {
  /** The filename the client gave for the part. */
  fileName: string;
  size: number;
  /** SHA-256 of the bytes, hex (the blob store's content hash). */
  hash: string;
}

/**
 * Receives an upload as it arrives: the `file` part's bytes go to a new file at `path` (created;
 * the caller removes it, whatever the outcome) and are hashed on the way, so memory follows a
 * chunk, not the file. `checkName` sees the part's filename before any of its bytes are written,
 * `checkHead` its first HEAD_BYTES (or all of it, when shorter) as soon as they arrived.
 * The first problem (a bound passed, a bad name, a malformed body, a write error) ends the upload
 * at once, without reading the rest of the body.
 */
export function receiveMultipartFile(
  contentType: string | undefined,
  body: Readable,
  maxFileBytes: number,
  path: string,
  checkName: (fileName: string) => void,
  checkHead: (fileName: string, head: Buffer) => void = () => undefined,
): Promise<ReceivedFile> {
  return new Promise<ReceivedFile>((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      checkContentType(contentType);
      bb = multipartParser(contentType, maxFileBytes);
    } catch (err) {
      body.resume();
      reject(err as LogsvcError);
      return;
    }
    let settled = false;
    const fail = (e: LogsvcError): void => {
      if (settled) return;
      settled = true;
      body.unpipe(bb);
      body.destroy();
      // Not from inside busboy's own callback (a 'limit' event): it still uses its state after.
      setImmediate(() => bb.destroy());
      reject(e);
    };
    let written: Promise<ReceivedFile> | null = null;
    bb.on('file', (name, stream, info) => {
      // A part cut short (the upload refused, busboy destroyed) errors here; the refusal says why.
      stream.on('error', () => undefined);
      if (name !== 'file') {
        fail(notNamedFile(name));
        stream.resume();
        return;
      }
      const fileName = info.filename ?? '';
      try {
        if (fileName === '') throw new LogsvcError('E_VALIDATION', 'the "file" part has no filename; send it as a file (filename="name.csv")');
        checkName(fileName);
      } catch (err) {
        fail(err as LogsvcError);
        stream.resume();
        return;
      }
      const hash = createHash('sha256');
      let size = 0;
      let head: Buffer[] | null = [];
      const inspect = (): void => {
        if (head === null) return;
        const bytes = Buffer.concat(head);
        head = null;
        try {
          checkHead(fileName, bytes);
        } catch (err) {
          fail(err as LogsvcError);
        }
      };
      stream.on('data', (d: Buffer) => {
        size += d.length;
        hash.update(d);
        if (head !== null) {
          head.push(d);
          if (size >= HEAD_BYTES) inspect();
        }
      });
      stream.on('end', inspect);
      stream.on('limit', () => fail(tooLarge(maxFileBytes)));
      written = pipeline(stream, createWriteStream(path, { flags: 'wx' })).then(
        () => ({ fileName, size, hash: hash.digest('hex') }),
        (err: NodeJS.ErrnoException) => {
          const e =
            err.code === 'ENOSPC' || err.code === 'EDQUOT'
              ? new LogsvcError('E_UNAVAILABLE', `file "${fileName}" cannot be stored: the data directory is out of space (${err.code}); free space and retry`)
              : err instanceof LogsvcError
                ? err
                : new LogsvcError('E_BAD_REQUEST', `the upload ended before the file did: ${err.message}`);
          fail(e);
          throw e;
        },
      );
      written.catch(() => undefined);
    });
    onLimits(bb, fail);
    bb.on('error', (err: Error) => fail(new LogsvcError('E_BAD_REQUEST', `multipart body is malformed: ${err.message}`)));
    body.on('error', (err: Error) => fail(err instanceof LogsvcError ? err : new LogsvcError('E_BAD_REQUEST', `the upload ended early: ${err.message}`)));
    bb.on('close', () => {
      if (settled) return;
      if (written === null) {
        fail(new LogsvcError('E_VALIDATION', 'multipart body has no part named "file"'));
        return;
      }
      written.then(
        (f) => {
          if (settled) return;
          settled = true;
          resolve(f);
        },
        () => undefined,
      );
    });
    body.pipe(bb);
  });
}
