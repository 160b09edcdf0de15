/**
 * The search page: query editor, time picker, histogram (drag to zoom), virtualised event list with
 * expandable events, field sidebar (top values, click to filter), aggregate results as a table and
 * a chart, live mode, progress and cancel. The URL holds the repository, query, range, zone and live.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { ApiError, QueryJob, queryFunctions, type FunctionSignature, type JobPoll, type Row } from '../api';
import { createQueryEditor, queryErrorPosition, type QueryEditor } from '../lib/editor';
import { barChart, compact, histogram, lineChart, type Chart } from '../lib/chart';
import { describeRange, formatTime, fromLocalInput, RELATIVE, relativeMs, toLocalInput, zoneOffsetMinutes, zones, type Range } from '../time';
import { searchParams, setRoute, type Route } from '../route';

/** Events fetched for the list by default, and at most (`limit` in the URL; the node's query.max_rows bounds it too). */
const EVENT_LIMIT = 1000;
const MAX_EVENT_LIMIT = 20_000;
const HISTOGRAM_BUCKETS = 100;

interface SearchState {
  repo: string;
  q: string;
  range: Range;
  zone: string;
  live: boolean;
  /** Newest events listed at most. */
  limit: number;
}

function stateFrom(route: Route, repo: string): SearchState {
  const p = route.params;
  const start = p.get('start') ?? '24h';
  const end = p.get('end');
  return {
    repo,
    q: p.get('q') ?? '',
    range: { start: /^\d+$/.test(start) ? Number(start) : start, ...(end !== null && /^\d+$/.test(end) ? { end: Number(end) } : {}) },
    zone: p.get('tz') ?? 'UTC',
    live: p.get('live') === '1',
    limit: Math.min(Math.max(Math.floor(Number(p.get('limit'))) || EVENT_LIMIT, 1), MAX_EVENT_LIMIT),
  };
}

function routeParams(s: SearchState): Record<string, string | undefined> {
  return { repo: s.repo, q: s.q, start: String(s.range.start), end: s.range.end === undefined ? undefined : String(s.range.end), tz: s.zone === 'UTC' ? undefined : s.zone, live: s.live ? '1' : undefined, limit: s.limit === EVENT_LIMIT ? undefined : String(s.limit) };
}

/** Whether the query aggregates: an aggregate function called outside strings and comments. */
export function isAggregateQuery(q: string, fns: readonly FunctionSignature[]): boolean {
  const code = q.replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/\/\/[^\n]*/g, ' ');
  const aggs = new Set(fns.filter((f) => f.aggregate).map((f) => f.name.toLowerCase()));
  for (const m of code.matchAll(/([A-Za-z_][\w:]*)\s*\(/g)) if (aggs.has(m[1]!.toLowerCase())) return true;
  return false;
}

const withStage = (q: string, stage: string): string => (q.trim() === '' ? stage : `${q}\n| ${stage}`);

interface Progress {
  done: boolean;
  workDone: number;
  totalWork: number;
  processedEvents: number;
  timeMillis: number;
}

interface Results {
  kind: 'events' | 'aggregate';
  rows: Row[];
  extra: Record<string, string>;
  warnings: string[];
  matched: number | null;
}

interface Hist {
  starts: number[];
  counts: number[];
  spanMs: number;
  total: number;
  /** The histogram's job finished (until then `total` is a partial count). */
  done: boolean;
}

export function SearchPage({ route, repo }: { route: Route; repo: string }) {
  const [state, setState] = useState<SearchState>(() => stateFrom(route, repo));
  const [fns, setFns] = useState<FunctionSignature[]>([]);
  const [results, setResults] = useState<Results | null>(null);
  const [hist, setHist] = useState<Hist | null>(null);
  const [progress, setProgress] = useState<Progress | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [running, setRunning] = useState(false);
  const jobs = useRef<QueryJob[]>([]);
  const editorHost = useRef<HTMLDivElement>(null);
  const editor = useRef<QueryEditor | null>(null);
  const fieldNames = useRef<string[]>([]);
  const fnsRef = useRef<FunctionSignature[]>([]);
  const runRef = useRef<(s?: Partial<SearchState>) => void>(() => {});
  /** The repository and URL parameters of the search last run (a URL change to anything else runs it). */
  const lastKey = useRef<string | null>(null);

  useEffect(() => {
    queryFunctions().then(
      (f) => {
        fnsRef.current = f;
        setFns(f);
      },
      () => {},
    );
  }, []);

  useEffect(() => {
    if (editorHost.current === null) return;
    const ed = createQueryEditor(editorHost.current, {
      doc: state.q,
      onRun: () => runRef.current(),
      completion: { functions: () => fnsRef.current, fields: () => fieldNames.current },
      placeholder: 'Search: free text, field=value, | groupBy(field), | timeChart() ...   (Ctrl+Enter runs)',
    });
    editor.current = ed;
    return () => ed.destroy();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  const stopJobs = useCallback(() => {
    for (const j of jobs.current) j.stop();
    jobs.current = [];
  }, []);
  useEffect(() => stopJobs, [stopJobs]);

  const run = useCallback(
    (patch: Partial<SearchState> = {}) => {
      const text = editor.current?.text() ?? state.q;
      const next: SearchState = { ...state, q: text, ...patch, repo };
      if (patch.q !== undefined) editor.current?.setText(patch.q);
      setState(next);
      lastKey.current = `${repo}|${searchParams(routeParams(next)).toString()}`;
      setRoute('search', routeParams(next), true);
      stopJobs();
      editor.current?.markError(null);
      setError(null);
      setResults(null);
      setHist(null);
      setRunning(true);
      setProgress({ done: false, workDone: 0, totalWork: 1, processedEvents: 0, timeMillis: 0 });

      const tz = zoneOffsetMinutes(next.zone);
      const body = { start: next.range.start, ...(next.range.end === undefined ? {} : { end: next.range.end }), isLive: next.live, timeZoneOffsetMinutes: tz };
      const aggregate = isAggregateQuery(next.q, fnsRef.current);
      const onError = (e: ApiError): void => {
        const pos = queryErrorPosition(e.message);
        if (pos !== null) editor.current?.markError(pos);
        setError(e.status === 0 ? e.message : `${e.status}: ${e.message}`);
        setRunning(false);
        stopJobs();
      };
      const main = new QueryJob(
        repo,
        { ...body, queryString: aggregate ? next.q : withStage(next.q, `tail(${next.limit})`) },
        (p: JobPoll) => {
          const rows = p.events;
          setResults({ kind: aggregate ? 'aggregate' : 'events', rows, extra: p.metaData.extraData ?? {}, warnings: p.metaData.warnings ?? [], matched: null });
          setProgress({ done: p.done, workDone: p.metaData.workDone, totalWork: p.metaData.totalWork, processedEvents: p.metaData.processedEvents, timeMillis: p.metaData.timeMillis });
          if (p.done && !next.live) setRunning(false);
        },
        onError,
      );
      jobs.current.push(main);
      void main.start();
      if (!aggregate) {
        const h = new QueryJob(
          repo,
          { ...body, queryString: withStage(next.q, `timeChart(buckets=${HISTOGRAM_BUCKETS})`) },
          (p: JobPoll) => {
            const x = p.metaData.extraData ?? {};
            const span = Number(x.bucket_span_millis ?? 60_000);
            const rows = p.events;
            const starts = rows.map((r) => Number(r._bucket));
            const counts = rows.map((r) => Number(r._count ?? 0));
            setHist({ starts, counts, spanMs: span, total: counts.reduce((a, b) => a + b, 0), done: p.done });
          },
          () => {},
        );
        jobs.current.push(h);
        void h.start();
      }
    },
    [repo, state, stopJobs],
  );
  runRef.current = run;

  // A new repository or a URL change from outside (back/forward, a shared link): run that search.
  const routeKey = `${repo}|${route.params.toString()}`;
  useEffect(() => {
    if (lastKey.current === routeKey) return;
    const fromUrl = stateFrom(route, repo);
    editor.current?.setText(fromUrl.q);
    run(fromUrl);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [routeKey]);

  const cancel = (): void => {
    stopJobs();
    setRunning(false);
    setProgress((p) => (p === null ? null : { ...p, done: true }));
    if (state.live) setState({ ...state, live: false });
  };

  const addFilter = (field: string, value: string, exclude = false): void => {
    const esc = value.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
    const name = /^[@#]?[\w.]+$/.test(field) ? field : `"${field}"`;
    const text = editor.current?.text() ?? state.q;
    run({ q: withStage(text, `${name}${exclude ? '!=' : '='}"${esc}"`) });
  };

  const events = results?.kind === 'events' ? results.rows : [];
  useEffect(() => {
    const names = new Set<string>();
    for (const e of events.slice(0, 500)) for (const k of Object.keys(e)) names.add(k);
    fieldNames.current = [...names].sort();
  }, [events]);

  const pct = progress === null ? 0 : progress.totalWork === 0 ? 100 : Math.round((100 * progress.workDone) / progress.totalWork);
  return (
    <div className="search">
      <div className="searchbar">
        <div className="editor" ref={editorHost} data-testid="query-editor" />
        <div className="controls">
          <TimePicker state={state} onChange={(range, zone) => run({ range, zone })} />
          <label className="live" title="Follow new events as they arrive">
            <input type="checkbox" checked={state.live} data-testid="live-toggle" onChange={(e) => run({ live: e.currentTarget.checked, ...(e.currentTarget.checked ? { range: { start: typeof state.range.start === 'string' ? state.range.start : '1h' } } : {}) })} /> Live
          </label>
          {running ? (
            <button className="secondary" onClick={cancel} data-testid="cancel">
              {state.live ? 'Stop' : 'Cancel'}
            </button>
          ) : null}
          <button onClick={() => run()} data-testid="run">
            Run
          </button>
        </div>
      </div>
      <div className="progress" aria-hidden={!running}>
        <div className="bar" style={{ width: `${running || (progress !== null && !progress.done) ? pct : 0}%` }} />
      </div>
      <div className="status" data-testid="status">
        {error !== null ? null : progress === null ? 'Ready' : `${progress.done ? (state.live ? 'Live' : 'Done') : `Searching… ${pct}%`} · ${compact(progress.processedEvents)} events scanned · ${progress.timeMillis} ms${hist !== null ? ` · ${hist.total.toLocaleString('en-US')}${hist.done || state.live ? '' : '+'} matching` : ''}`}
        {results?.warnings.map((w) => (
          <span key={w} className="warning">
            {' '}
            ⚠ {w}
          </span>
        ))}
      </div>
      {error !== null ? (
        <pre className="error" data-testid="query-error">
          {error}
        </pre>
      ) : null}
      {results?.kind === 'aggregate' ? (
        <AggregateView results={results} zone={state.zone} />
      ) : (
        <>
          {hist !== null ? (
            <HistogramView
              hist={hist}
              zone={state.zone}
              onZoom={(from, to) => run({ range: { start: from, end: to }, live: false })}
            />
          ) : (
            <div className="histogram placeholder" />
          )}
          <div className="results">
            <FieldSidebar events={events} onFilter={addFilter} />
            <EventList events={events} zone={state.zone} onFilter={addFilter} fns={fns.length} />
          </div>
        </>
      )}
    </div>
  );
}

function TimePicker({ state, onChange }: { state: SearchState; onChange: (r: Range, zone: string) => void }) {
  const [open, setOpen] = useState(false);
  const [zone, setZone] = useState(state.zone);
  const now = Date.now();
  const startMs = typeof state.range.start === 'number' ? state.range.start : now - (relativeMs(state.range.start) ?? 86_400_000);
  const [from, setFrom] = useState(toLocalInput(startMs, state.zone));
  const [to, setTo] = useState(toLocalInput(state.range.end ?? now, state.zone));
  const allZones = useMemo(zones, []);
  return (
    <div className="timepicker">
      <button className="secondary" onClick={() => setOpen(!open)} data-testid="time-picker">
        {describeRange(state.range, state.zone)} {state.zone !== 'UTC' ? `(${state.zone})` : '(UTC)'} ▾
      </button>
      {open ? (
        <div className="popover" data-testid="time-popover">
          <div className="relative">
            {RELATIVE.map(([k, label]) => (
              <button
                key={k}
                className={state.range.start === k ? 'chip active' : 'chip'}
                onClick={() => {
                  setOpen(false);
                  onChange({ start: k }, zone);
                }}
              >
                {label}
              </button>
            ))}
          </div>
          <div className="absolute">
            <label>
              From <input type="datetime-local" step="1" value={from} onChange={(e) => setFrom(e.currentTarget.value)} data-testid="time-from" />
            </label>
            <label>
              To <input type="datetime-local" step="1" value={to} onChange={(e) => setTo(e.currentTarget.value)} data-testid="time-to" />
            </label>
            <label>
              Time zone{' '}
              <select value={zone} onChange={(e) => setZone(e.currentTarget.value)} data-testid="time-zone">
                {allZones.map((z) => (
                  <option key={z} value={z}>
                    {z === 'local' ? `Browser (${Intl.DateTimeFormat().resolvedOptions().timeZone})` : z}
                  </option>
                ))}
              </select>
            </label>
            <button
              onClick={() => {
                const a = fromLocalInput(from, zone);
                const b = fromLocalInput(to, zone);
                if (a === null || b === null || a >= b) return;
                setOpen(false);
                onChange({ start: a, end: b }, zone);
              }}
              data-testid="time-apply"
            >
              Apply
            </button>
          </div>
        </div>
      ) : null}
    </div>
  );
}

function HistogramView({ hist, zone, onZoom }: { hist: Hist; zone: string; onZoom: (from: number, to: number) => void }) {
  const el = useRef<HTMLDivElement>(null);
  const zoomRef = useRef(onZoom);
  zoomRef.current = onZoom;
  useEffect(() => {
    if (el.current === null) return;
    let chart: Chart | null = histogram(el.current, { starts: hist.starts, counts: hist.counts, spanMs: hist.spanMs, tzOffsetMinutes: zoneOffsetMinutes(zone), onZoom: (a, b) => zoomRef.current(a, b) });
    return () => {
      chart?.destroy();
      chart = null;
    };
  }, [hist, zone]);
  return <div className="histogram" ref={el} data-testid="histogram" title="Drag across the chart to zoom into that time range" />;
}

const ROW = 24;
const OVERSCAN = 20;

/** Height of an expanded event's detail block. */
function detailHeight(e: Row): number {
  return Math.min(40 + Object.keys(e).length * 22, 420);
}

function EventList({ events, zone, onFilter }: { events: Row[]; zone: string; onFilter: (f: string, v: string, exclude?: boolean) => void; fns: number }) {
  const [expanded, setExpanded] = useState<Map<number, number>>(new Map());
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(600);
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => setExpanded(new Map()), [events]);
  useEffect(() => {
    if (box.current === null) return;
    const ro = new ResizeObserver(() => setHeight(box.current?.clientHeight ?? 600));
    ro.observe(box.current);
    return () => ro.disconnect();
  }, []);
  // Offsets: i * ROW plus the detail blocks of expanded events above i (few, kept sorted).
  const open = useMemo(() => [...expanded.entries()].sort((a, b) => a[0] - b[0]), [expanded]);
  const top = (i: number): number => {
    let y = i * ROW;
    for (const [j, h] of open) if (j < i) y += h;
    return y;
  };
  const total = top(events.length);
  let lo = 0;
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (top(mid + 1) <= scrollTop) lo = mid + 1;
    else hi = mid;
  }
  const first = Math.max(0, lo - OVERSCAN);
  const rows = [];
  for (let i = first; i < events.length; i++) {
    const y = top(i);
    if (y > scrollTop + height + OVERSCAN * ROW) break;
    const e = events[i]!;
    const h = expanded.get(i);
    rows.push(
      <div key={i} className={h === undefined ? 'event' : 'event open'} style={{ top: y }} data-testid="event">
        <div
          className="line"
          onClick={() => {
            const next = new Map(expanded);
            if (next.has(i)) next.delete(i);
            else next.set(i, detailHeight(e));
            setExpanded(next);
          }}
        >
          <span className="caret">{h === undefined ? '▸' : '▾'}</span>
          <span className="ts">{typeof e['@timestamp'] === 'number' || typeof e['@timestamp'] === 'string' ? formatTime(Number(e['@timestamp']), zone) : ''}</span>
          <span className="raw">{String(e['@rawstring'] ?? JSON.stringify(e))}</span>
        </div>
        {h !== undefined ? (
          <div className="detail" style={{ height: h - 8 }}>
            <table>
              <tbody>
                {Object.entries(e).map(([k, v]) => (
                  <tr key={k}>
                    <th>{k}</th>
                    <td>
                      <span className="value">{String(v)}</span>
                      {k !== '@rawstring' && k !== '@id' && k !== '@timestamp' ? (
                        <span className="actions">
                          <button className="link" title="Keep events with this value" onClick={() => onFilter(k, String(v))}>
                            +
                          </button>
                          <button className="link" title="Leave out events with this value" onClick={() => onFilter(k, String(v), true)}>
                            −
                          </button>
                        </span>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </div>,
    );
  }
  return (
    <div className="eventlist" ref={box} onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)} data-testid="event-list">
      {events.length === 0 ? <div className="empty">No events</div> : null}
      <div style={{ height: total, position: 'relative' }}>{rows}</div>
    </div>
  );
}

function FieldSidebar({ events, onFilter }: { events: Row[]; onFilter: (f: string, v: string, exclude?: boolean) => void }) {
  const [openField, setOpenField] = useState<string | null>(null);
  const stats = useMemo(() => {
    const m = new Map<string, Map<string, number>>();
    for (const e of events) {
      for (const [k, v] of Object.entries(e)) {
        if (k === '@rawstring' || k === '@id' || k === '@timestamp') continue;
        let vals = m.get(k);
        if (vals === undefined) m.set(k, (vals = new Map()));
        if (vals.size < 1000 || vals.has(String(v))) vals.set(String(v), (vals.get(String(v)) ?? 0) + 1);
      }
    }
    return [...m.entries()].map(([name, vals]) => ({ name, count: [...vals.values()].reduce((a, b) => a + b, 0), distinct: vals.size, top: [...vals.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10) })).sort((a, b) => b.count - a.count || a.name.localeCompare(b.name));
  }, [events]);
  return (
    <aside className="fields" data-testid="fields">
      <h3>Fields</h3>
      {stats.length === 0 ? <div className="muted">None</div> : null}
      {stats.map((f) => (
        <div key={f.name} className="field">
          <button className="fieldname" onClick={() => setOpenField(openField === f.name ? null : f.name)} data-testid="field">
            <span>{f.name}</span>
            <span className="muted">{f.distinct}</span>
          </button>
          {openField === f.name ? (
            <ul className="topvalues">
              {f.top.map(([v, n]) => (
                <li key={v}>
                  <button className="link" onClick={() => onFilter(f.name, v)} title="Filter on this value (click), or leave it out (Alt+click)" onMouseDown={(e) => e.altKey && (e.preventDefault(), onFilter(f.name, v, true))} data-testid="top-value">
                    {v === '' ? '(empty)' : v}
                  </button>
                  <span className="muted">{Math.round((100 * n) / Math.max(events.length, 1))}%</span>
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ))}
    </aside>
  );
}

function AggregateView({ results, zone }: { results: Results; zone: string }) {
  const [view, setView] = useState<'chart' | 'table'>('chart');
  const chartEl = useRef<HTMLDivElement>(null);
  const rows = results.rows;
  const columns = useMemo(() => {
    const c: string[] = [];
    for (const r of rows.slice(0, 200)) for (const k of Object.keys(r)) if (!c.includes(k)) c.push(k);
    return c;
  }, [rows]);
  const isTimechart = results.extra.timechart === 'true' || columns.includes('_bucket');
  useEffect(() => {
    if (view !== 'chart' || chartEl.current === null || rows.length === 0) return;
    let chart: Chart | null = null;
    const numeric = columns.filter((c) => c !== '_bucket' && rows.every((r) => r[c] === undefined || r[c] === null || r[c] === '' || Number.isFinite(Number(r[c]))));
    // The value: _count when there is one, else the last numeric column; the label (or series):
    // the first other column (groupBy's and timeChart's fields come first).
    const valueCol = columns.includes('_count') ? '_count' : numeric[numeric.length - 1];
    if (valueCol === undefined) return;
    const labelCol = columns.find((c) => c !== '_bucket' && c !== valueCol);
    if (isTimechart) {
      const starts = [...new Set(rows.map((r) => Number(r._bucket)))].sort((a, b) => a - b);
      const idx = new Map(starts.map((s, i) => [s, i]));
      const names = labelCol === undefined ? [valueCol] : [...new Set(rows.map((r) => String(r[labelCol] ?? '')))];
      const at = new Map(names.map((n, i) => [n, i]));
      const values = names.map(() => new Array<number | null>(starts.length).fill(null));
      for (const r of rows) {
        const si = labelCol === undefined ? 0 : at.get(String(r[labelCol] ?? ''))!;
        values[si]![idx.get(Number(r._bucket))!] = Number(r[valueCol]);
      }
      chart = lineChart(chartEl.current, { starts, series: names.map((n, i) => ({ name: n, values: values[i]! })), tzOffsetMinutes: zoneOffsetMinutes(zone), spanMs: Number(results.extra.bucket_span_millis ?? 60_000) });
    } else {
      const shown = rows.slice(0, 100);
      chart = barChart(chartEl.current, { labels: shown.map((r) => (labelCol === undefined ? valueCol : String(r[labelCol] ?? ''))), values: shown.map((r) => Number(r[valueCol])), valueName: valueCol });
    }
    return () => chart?.destroy();
  }, [rows, columns, view, isTimechart, zone, results.extra.bucket_span_millis]);
  return (
    <div className="aggregate" data-testid="aggregate">
      <div className="tabs">
        <button className={view === 'chart' ? 'tab active' : 'tab'} onClick={() => setView('chart')} data-testid="view-chart">
          {isTimechart ? 'Line chart' : 'Bar chart'}
        </button>
        <button className={view === 'table' ? 'tab active' : 'tab'} onClick={() => setView('table')} data-testid="view-table">
          Table
        </button>
        <span className="muted">{rows.length.toLocaleString('en-US')} rows</span>
      </div>
      {view === 'chart' ? <div className="chart" ref={chartEl} data-testid="chart" /> : null}
      {view === 'table' ? (
        <div className="tablewrap">
          <table className="grid" data-testid="result-table">
            <thead>
              <tr>
                {columns.map((c) => (
                  <th key={c}>{c}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.slice(0, 2000).map((r, i) => (
                <tr key={i}>
                  {columns.map((c) => (
                    <td key={c}>{c === '_bucket' || c === '@timestamp' ? formatTime(Number(r[c]), zone) : String(r[c] ?? '')}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </div>
  );
}
