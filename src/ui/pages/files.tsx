/** Lookup files of the repository: upload (CSV or JSON), list, delete. */
import { useEffect, useState } from 'react';
import { del, gql, paths, upload } from '../api';

export function FilesPage({ repo }: { repo: string }) {
  const [files, setFiles] = useState<{ name: string; hash: string }[]>([]);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const load = (): void => {
    gql<{ repository: { files: { contentHash: string; nameAndPath: { name: string } }[] } }>('query($r: String!) { repository(name: $r) { files { contentHash nameAndPath { name } } } }', { r: repo }).then(
      (d) => setFiles(d.repository.files.map((f) => ({ name: f.nameAndPath.name, hash: f.contentHash })).sort((a, b) => a.name.localeCompare(b.name))),
      (e: Error) => setMessage({ ok: false, text: e.message }),
    );
  };
  useEffect(load, [repo]);
  const onPick = async (input: HTMLInputElement): Promise<void> => {
    const file = input.files?.[0];
    if (file === undefined) return;
    setBusy(true);
    try {
      await upload(paths.files(repo), file);
      setMessage({ ok: true, text: `Uploaded ${file.name}` });
      load();
    } catch (e) {
      setMessage({ ok: false, text: (e as Error).message });
    } finally {
      setBusy(false);
      input.value = '';
    }
  };
  return (
    <div className="page">
      <h2>Files</h2>
      <p className="muted">Lookup files (CSV or JSON) for match() and lookup() in queries of {repo}.</p>
      <label className="upload">
        <input type="file" accept=".csv,.json,text/csv,application/json" disabled={busy} onChange={(e) => void onPick(e.currentTarget)} data-testid="file-input" /> {busy ? 'Uploading…' : ''}
      </label>
      {message !== null ? <div className={message.ok ? 'ok' : 'error'} data-testid="file-message">{message.text}</div> : null}
      <table className="grid" data-testid="file-list">
        <thead>
          <tr>
            <th>Name</th>
            <th>Content hash</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {files.map((f) => (
            <tr key={f.name}>
              <td>{f.name}</td>
              <td className="mono muted">{f.hash.slice(0, 16)}</td>
              <td>
                <button
                  className="link danger"
                  onClick={() => {
                    if (!confirm(`Delete ${f.name}?`)) return;
                    del(paths.file(repo, f.name)).then(load, (e: Error) => setMessage({ ok: false, text: e.message }));
                  }}
                >
                  Delete
                </button>
              </td>
            </tr>
          ))}
          {files.length === 0 ? (
            <tr>
              <td colSpan={3} className="muted">
                No files
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
    </div>
  );
}
