/**
 * Lookup-file endpoints: upload (multipart, part `file`) and download of a repository's files (both
 * `/repositories/` and the older `/dataspaces/` spelling), removal of a repository file, and the
 * shared files (`/api/v1/uploadedfiles/shared`), which only root may upload or delete.
 */
import { LogsvcError } from '../../lib/errors.js';
import { readMultipartFile, type FileService } from '../../files/index.js';
import type { StoredFile } from '../../global/index.js';
import { apiPrincipal, type HttpServices } from '../context.js';
import { json, type RequestInfo, type Route } from '../types.js';

const fileJson = (f: StoredFile, shared: boolean) => ({
  name: f.name,
  path: shared ? `/shared/${f.name}` : f.name,
  contentHash: f.contentHash,
  sizeBytes: f.size,
  rows: f.rows,
});

export function fileRoutes(s: HttpServices & { files: FileService; maxFileBytes: number }): Route[] {
  const upload = (shared: boolean) => async (req: RequestInfo, body: Buffer) => {
    const p = apiPrincipal(s, req);
    const part = await readMultipartFile(req.headers.get('content-type'), body, s.maxFileBytes);
    if (part.fileName === '') throw new LogsvcError('E_VALIDATION', 'the "file" part has no filename; send it as a file (filename="name.csv")');
    const f = await s.files.upload(p, shared ? null : req.params.repo!, part.fileName, part.bytes);
    return json(200, fileJson(f, shared));
  };
  const routes: Route[] = [
    { method: 'POST', pattern: '/api/v1/uploadedfiles/shared', body: 'upload', handle: upload(true) },
    {
      method: 'DELETE',
      pattern: '/api/v1/uploadedfiles/shared/:name',
      body: 'none',
      handle: async (req) => {
        await s.files.remove(apiPrincipal(s, req), null, req.params.name!);
        return { status: 204 };
      },
    },
  ];
  for (const prefix of ['repositories', 'dataspaces']) {
    routes.push(
      { method: 'POST', pattern: `/api/v1/${prefix}/:repo/files`, body: 'upload', handle: upload(false) },
      {
        method: 'GET',
        pattern: `/api/v1/${prefix}/:repo/files/:name`,
        body: 'none',
        handle: async (req) => {
          const { file, bytes } = await s.files.download(apiPrincipal(s, req), req.params.repo!, req.params.name!);
          const type = file.name.toLowerCase().endsWith('.json') ? 'application/json' : 'text/csv; charset=utf-8';
          return { status: 200, headers: { 'content-type': type, etag: `"${file.contentHash}"` }, body: bytes };
        },
      },
      {
        method: 'DELETE',
        pattern: `/api/v1/${prefix}/:repo/files/:name`,
        body: 'none',
        handle: async (req) => {
          await s.files.remove(apiPrincipal(s, req), req.params.repo!, req.params.name!);
          return { status: 204 };
        },
      },
    );
  }
  return routes;
}
