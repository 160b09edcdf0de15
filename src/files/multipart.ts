/**
 * Reading a `multipart/form-data` upload (busboy's one home). The body is already in memory and
 * within the upload size limit; busboy's own limits bound what a hostile body can make us do: a
 * handful of parts, one file, small headers. The file must be in a part named `file`, as the
 * product and its clients (humioctl, humiolib) send it.
 */
import busboy from 'busboy';
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

export function readMultipartFile(contentType: string | undefined, body: Buffer, maxFileBytes: number): Promise<UploadedPart> {
  if (contentType === undefined || !/^multipart\/form-data\s*;/i.test(contentType)) {
    return Promise.reject(new LogsvcError('E_UNSUPPORTED_MEDIA_TYPE', 'a file upload must be multipart/form-data with a part named "file"'));
  }
  return new Promise<UploadedPart>((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: { 'content-type': contentType },
        // The name exactly as sent: a "../x.csv" must be refused, not quietly cut to "x.csv".
        preservePath: true,
        // Header parameters (filename="résumé.csv") as the UTF-8 that curl, browsers and humioctl
        // send; busboy's default reads them as Latin-1 and stored "rÃ©sumÃ©.csv".
        defParamCharset: 'utf8',
        limits: { parts: MAX_PARTS, files: 1, fields: MAX_PARTS, fieldSize: MAX_FIELD_BYTES, fileSize: maxFileBytes, headerPairs: MAX_HEADER_PAIRS },
      });
    } catch (err) {
      reject(new LogsvcError('E_BAD_REQUEST', `multipart body: ${(err as Error).message}`));
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
      stream.on('limit', () => fail(new LogsvcError('E_BODY_TOO_LARGE', `the uploaded file is larger than the limit of ${maxFileBytes} bytes (files.max_file_bytes)`)));
      stream.on('end', () => {
        if (name !== 'file') {
          fail(new LogsvcError('E_VALIDATION', `multipart part "${name.slice(0, 100)}": the file must be sent in a part named "file"`));
          return;
        }
        found = { fileName: info.filename ?? '', bytes: Buffer.concat(chunks, size) };
      });
    });
    bb.on('partsLimit', () => fail(new LogsvcError('E_VALIDATION', `multipart body has more than ${MAX_PARTS} parts`)));
    bb.on('filesLimit', () => fail(new LogsvcError('E_VALIDATION', 'multipart body has more than one file; upload one file per request')));
    bb.on('fieldsLimit', () => fail(new LogsvcError('E_VALIDATION', `multipart body has more than ${MAX_PARTS} fields`)));
    bb.on('error', (err: Error) => reject(failed ?? new LogsvcError('E_BAD_REQUEST', `multipart body is malformed: ${err.message}`)));
    bb.on('close', () => {
      if (failed !== null) reject(failed);
      else if (found === null) reject(new LogsvcError('E_VALIDATION', 'multipart body has no part named "file"'));
      else resolve(found);
    });
    bb.end(body);
  });
}
