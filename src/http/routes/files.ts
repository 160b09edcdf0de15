/**
 * Lookup-file endpoints: upload (multipart, part `file`) and download of a repository's files (both
 * `/repositories/` and the older `/dataspaces/` spelling), removal of a repository file, and the
 * shared files (`/api/v1/uploadedfiles/shared`), which only root may upload or delete.
 */
import { Readable } from 'node:stream';
import type { FileService } from '../../files/index.js';
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
  // The body is read as it arrives, straight to disk (FileService.uploadStream); `handle` takes a
  // body already in memory the same way.
  const streamed = (shared: boolean) => async (req: RequestInfo, body: Readable) => {
    const f = await s.files.uploadStream(apiPrincipal(s, req), shared ? null : req.params.repo!, req.headers.get('content-type'), body);
    return json(200, fileJson(f, shared));
  };
  const upload = (shared: boolean) => {
    const run = streamed(shared);
    return { streamed: run, handle: (req: RequestInfo, body: Buffer) => run(req, Readable.from([body])) };
  };
  const routes: Route[] = [
    { method: 'POST', pattern: '/api/v1/uploadedfiles/shared', body: 'upload', ...upload(true) },
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
      { method: 'POST', pattern: `/api/v1/${prefix}/:repo/files`, body: 'upload', ...upload(false) },
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
