/** Helpers for lookup-file tests against a real node: multipart uploads built by hand or by FormData. */
import { api, type ApiResponse } from './http.js';

/** POSTs `content` as the multipart part "file" named `fileName` (FormData, as humiolib/humioctl send). */
export async function uploadFile(base: string, path: string, token: string, fileName: string, content: string | Buffer, part = 'file'): Promise<ApiResponse> {
  const form = new FormData();
  form.append(part, new Blob([content]), fileName);
  const res = await fetch(new URL(path, base), { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form, signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
}

/** A multipart body assembled byte by byte (for names FormData would not send, or many parts). */
export function multipartBody(parts: { name: string; fileName?: string; content: string }[], boundary = 'XbOuNdArYx'): { body: Buffer; contentType: string } {
  let s = '';
  for (const p of parts) {
    s += `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${p.fileName === undefined ? '' : `; filename="${p.fileName}"`}\r\n`;
    if (p.fileName !== undefined) s += 'Content-Type: application/octet-stream\r\n';
    s += `\r\n${p.content}\r\n`;
  }
  s += `--${boundary}--\r\n`;
  return { body: Buffer.from(s), contentType: `multipart/form-data; boundary=${boundary}` };
}

export function postMultipart(base: string, path: string, token: string, m: { body: Buffer; contentType: string }): Promise<ApiResponse> {
  return api(base, path, { token, headers: { 'content-type': m.contentType }, body: m.body, timeoutMs: 30_000 });
}
