/** Parsers: list, edit a script with its test cases run as you type (nothing saved until Save), save, delete. */
import { useEffect, useRef, useState } from 'react';
import { gql, paths, postJson, queryFunctions, type FunctionSignature } from '../api';
import { createQueryEditor, queryErrorPosition, type QueryEditor } from '../lib/editor';

interface ParserInfo {
  id: string;
  name: string;
  isBuiltIn: boolean;
  script: string;
  testCases: { event: { rawString: string } }[];
}

interface TryResult {
  compileError: string | null;
  results: { outputs: Record<string, string>[]; failure: string | null }[];
}

const LIST = 'query($r: String!) { repository(name: $r) { parsers { id name isBuiltIn script testCases { event { rawString } } } } }';

export function ParsersPage({ repo }: { repo: string }) {
  const [parsers, setParsers] = useState<ParserInfo[]>([]);
  const [name, setName] = useState('');
  const [cases, setCases] = useState<string[]>(['']);
  const [result, setResult] = useState<TryResult | null>(null);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [script, setScript] = useState('');
  const host = useRef<HTMLDivElement>(null);
  const editor = useRef<QueryEditor | null>(null);
  const fns = useRef<FunctionSignature[]>([]);

  const load = (): void => {
    gql<{ repository: { parsers: ParserInfo[] } }>(LIST, { r: repo }).then(
      (d) => setParsers(d.repository.parsers.filter((p) => !p.isBuiltIn)),
      (e: Error) => setMessage({ ok: false, text: e.message }),
    );
  };
  useEffect(load, [repo]);
  useEffect(() => {
    void queryFunctions().then((f) => (fns.current = f), () => {});
    if (host.current === null) return;
    const ed = createQueryEditor(host.current, { doc: '', onRun: () => {}, onChange: setScript, completion: { functions: () => fns.current, fields: () => [] }, minLines: 8, placeholder: 'kvParse() | parseTimestamp(field=ts)' });
    editor.current = ed;
    return () => ed.destroy();
  }, []);

  // Test cases run as you type (debounced), against the script as it is in the editor.
  useEffect(() => {
    const timer = setTimeout(() => {
      postJson<TryResult>(paths.parserTry(repo), { name, script, testCases: cases.map((rawString) => ({ rawString })) }).then(
        (r) => {
          setResult(r);
          const pos = r.compileError === null ? null : queryErrorPosition(r.compileError);
          editor.current?.markError(pos);
        },
        (e: Error) => setResult({ compileError: e.message, results: [] }),
      );
    }, 250);
    return () => clearTimeout(timer);
  }, [name, script, cases, repo]);

  const open = (p: ParserInfo | null): void => {
    setName(p?.name ?? '');
    editor.current?.setText(p?.script ?? '');
    setScript(p?.script ?? '');
    setCases(p === null || p.testCases.length === 0 ? [''] : p.testCases.map((c) => c.event.rawString));
    setMessage(null);
  };
  const save = async (): Promise<void> => {
    try {
      await gql('mutation($i: CreateParserInputV2!) { createParserV2(input: $i) { id } }', {
        i: { name, script, testCases: cases.filter((c) => c !== '').map((rawString) => ({ event: { rawString } })), repositoryName: repo, fieldsToTag: [], fieldsToBeRemovedBeforeParsing: [], allowOverwritingExistingParser: true },
      });
      setMessage({ ok: true, text: `Saved parser "${name}"` });
      load();
    } catch (e) {
      setMessage({ ok: false, text: (e as Error).message });
    }
  };
  const remove = async (p: ParserInfo): Promise<void> => {
    if (!confirm(`Delete parser "${p.name}"?`)) return;
    try {
      await gql('mutation($i: DeleteParserInput!) { deleteParser(input: $i) { result } }', { i: { id: p.id, repositoryName: repo } });
      load();
    } catch (e) {
      setMessage({ ok: false, text: (e as Error).message });
    }
  };

  return (
    <div className="page two-col">
      <aside className="list">
        <h2>Parsers</h2>
        <button onClick={() => open(null)} data-testid="new-parser">
          New parser
        </button>
        <ul>
          {parsers.map((p) => (
            <li key={p.id}>
              <button className="link" onClick={() => open(p)}>
                {p.name}
              </button>
              <button className="link danger" title="Delete" onClick={() => void remove(p)}>
                ✕
              </button>
            </li>
          ))}
        </ul>
      </aside>
      <section className="editor-page">
        <label>
          Name <input value={name} onChange={(e) => setName(e.currentTarget.value)} data-testid="parser-name" />
        </label>
        <div className="label">Script</div>
        <div ref={host} data-testid="parser-script" />
        {result?.compileError ? <pre className="error" data-testid="parser-compile-error">{result.compileError}</pre> : null}
        <div className="label">Test cases (run as you type)</div>
        {cases.map((c, i) => (
          <div key={i} className="testcase" data-testid="test-case">
            <textarea rows={2} value={c} placeholder="a raw log line" onChange={(e) => setCases(cases.map((x, j) => (j === i ? e.currentTarget.value : x)))} data-testid="test-input" />
            <div className="output" data-testid="test-output">
              {result?.results[i]?.failure ? <div className="error">{result.results[i]!.failure}</div> : null}
              {(result?.results[i]?.outputs ?? []).map((o, k) => (
                <table key={k} className="kv">
                  <tbody>
                    {Object.entries(o)
                      .filter(([f]) => f !== '@rawstring')
                      .map(([f, v]) => (
                        <tr key={f}>
                          <th>{f}</th>
                          <td>{v}</td>
                        </tr>
                      ))}
                  </tbody>
                </table>
              ))}
            </div>
          </div>
        ))}
        <div className="row">
          <button className="secondary" onClick={() => setCases([...cases, ''])} data-testid="add-test-case">
            Add test case
          </button>
          <button onClick={() => void save()} disabled={name === ''} data-testid="save-parser">
            Save
          </button>
        </div>
        {message !== null ? <div className={message.ok ? 'ok' : 'error'} data-testid="parser-message">{message.text}</div> : null}
      </section>
    </div>
  );
}
