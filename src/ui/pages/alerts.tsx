/** Alerts and actions: list (with last error), create and edit alerts; create webhook actions. */
import { useEffect, useState } from 'react';
import { gql } from '../api';

interface Alert {
  id: string;
  name: string;
  description: string | null;
  queryString: string;
  queryStart: string;
  throttleTimeMillis: number;
  enabled: boolean;
  actions: string[];
  lastError: string | null;
  timeOfLastTrigger: number | null;
}

interface Action {
  id: string;
  name: string;
  __typename: string;
}

const LIST = 'query($r: String!) { searchDomain(name: $r) { alerts { id name description queryString queryStart throttleTimeMillis enabled actions lastError timeOfLastTrigger } actions { id name __typename } } }';

const blank = (): Omit<Alert, 'id' | 'lastError' | 'timeOfLastTrigger'> & { id: string | null } => ({ id: null, name: '', description: '', queryString: '', queryStart: '1h', throttleTimeMillis: 300_000, enabled: true, actions: [] });

export function AlertsPage({ repo }: { repo: string }) {
  const [alerts, setAlerts] = useState<Alert[]>([]);
  const [actions, setActions] = useState<Action[]>([]);
  const [form, setForm] = useState<ReturnType<typeof blank> | null>(null);
  const [action, setAction] = useState<{ name: string; url: string } | null>(null);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const load = (): void => {
    gql<{ searchDomain: { alerts: Alert[]; actions: Action[] } }>(LIST, { r: repo }).then(
      (d) => {
        setAlerts(d.searchDomain.alerts);
        setActions(d.searchDomain.actions);
      },
      (e: Error) => setMessage({ ok: false, text: e.message }),
    );
  };
  useEffect(load, [repo]);

  const saveAlert = async (): Promise<void> => {
    if (form === null) return;
    const input = { viewName: repo, name: form.name, description: form.description, queryString: form.queryString, queryStart: form.queryStart, throttleTimeMillis: form.throttleTimeMillis, enabled: form.enabled, actions: form.actions };
    try {
      if (form.id === null) await gql('mutation($i: CreateAlert!) { createAlert(input: $i) { id } }', { i: input });
      else await gql('mutation($i: UpdateAlert!) { updateAlert(input: $i) { id } }', { i: { ...input, id: form.id, labels: [] } });
      setMessage({ ok: true, text: `Saved alert "${form.name}"` });
      setForm(null);
      load();
    } catch (e) {
      setMessage({ ok: false, text: (e as Error).message });
    }
  };
  const saveAction = async (): Promise<void> => {
    if (action === null) return;
    try {
      await gql('mutation($i: CreateWebhookAction!) { createWebhookAction(input: $i) { id } }', {
        i: { viewName: repo, name: action.name, url: action.url, method: 'POST', headers: [{ header: 'Content-Type', value: 'application/json' }], bodyTemplate: '{"alert": "{alert_name}", "events": {events}}', ignoreSSL: false, useProxy: false },
      });
      setMessage({ ok: true, text: `Created action "${action.name}"` });
      setAction(null);
      load();
    } catch (e) {
      setMessage({ ok: false, text: (e as Error).message });
    }
  };
  const remove = async (a: Alert): Promise<void> => {
    if (!confirm(`Delete alert "${a.name}"?`)) return;
    try {
      await gql('mutation($i: DeleteAlert!) { deleteAlert(input: $i) }', { i: { viewName: repo, id: a.id } });
      load();
    } catch (e) {
      setMessage({ ok: false, text: (e as Error).message });
    }
  };

  return (
    <div className="page">
      <h2>Alerts</h2>
      <div className="row">
        <button onClick={() => setForm(blank())} data-testid="new-alert">
          New alert
        </button>
        <button className="secondary" onClick={() => setAction({ name: '', url: '' })} data-testid="new-action">
          New webhook action
        </button>
      </div>
      {message !== null ? <div className={message.ok ? 'ok' : 'error'} data-testid="alert-message">{message.text}</div> : null}
      {action !== null ? (
        <div className="form" data-testid="action-form">
          <label>
            Name <input value={action.name} onChange={(e) => setAction({ ...action, name: e.currentTarget.value })} data-testid="action-name" />
          </label>
          <label>
            URL <input value={action.url} placeholder="https://hooks.example.com/..." onChange={(e) => setAction({ ...action, url: e.currentTarget.value })} data-testid="action-url" />
          </label>
          <div className="row">
            <button onClick={() => void saveAction()} data-testid="save-action">
              Create action
            </button>
            <button className="secondary" onClick={() => setAction(null)}>
              Cancel
            </button>
          </div>
        </div>
      ) : null}
      {form !== null ? (
        <div className="form" data-testid="alert-form">
          <label>
            Name <input value={form.name} onChange={(e) => setForm({ ...form, name: e.currentTarget.value })} data-testid="alert-name" />
          </label>
          <label>
            Query <textarea rows={3} className="mono" value={form.queryString} onChange={(e) => setForm({ ...form, queryString: e.currentTarget.value })} data-testid="alert-query" />
          </label>
          <label>
            Window <input value={form.queryStart} onChange={(e) => setForm({ ...form, queryStart: e.currentTarget.value })} data-testid="alert-start" />
          </label>
          <label>
            Throttle (minutes){' '}
            <input type="number" min={0} value={Math.round(form.throttleTimeMillis / 60_000)} onChange={(e) => setForm({ ...form, throttleTimeMillis: Number(e.currentTarget.value) * 60_000 })} />
          </label>
          <fieldset>
            <legend>Actions</legend>
            {actions.length === 0 ? <span className="muted">No actions yet: create a webhook action first.</span> : null}
            {actions.map((a) => (
              <label key={a.id} className="check">
                <input type="checkbox" checked={form.actions.includes(a.id)} onChange={(e) => setForm({ ...form, actions: e.currentTarget.checked ? [...form.actions, a.id] : form.actions.filter((x) => x !== a.id) })} data-testid="alert-action" /> {a.name}{' '}
                <span className="muted">({a.__typename.replace(/Action$/, '')})</span>
              </label>
            ))}
          </fieldset>
          <label className="check">
            <input type="checkbox" checked={form.enabled} onChange={(e) => setForm({ ...form, enabled: e.currentTarget.checked })} /> Enabled
          </label>
          <div className="row">
            <button onClick={() => void saveAlert()} data-testid="save-alert">
              Save alert
            </button>
            <button className="secondary" onClick={() => setForm(null)}>
              Cancel
            </button>
          </div>
        </div>
      ) : null}
      <table className="grid" data-testid="alert-list">
        <thead>
          <tr>
            <th>Name</th>
            <th>Query</th>
            <th>Window</th>
            <th>Actions</th>
            <th>State</th>
            <th>Last triggered</th>
            <th>Last error</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {alerts.map((a) => (
            <tr key={a.id}>
              <td>{a.name}</td>
              <td className="mono">{a.queryString}</td>
              <td>{a.queryStart}</td>
              <td>{a.actions.map((id) => actions.find((x) => x.id === id)?.name ?? id).join(', ')}</td>
              <td>{a.enabled ? 'enabled' : 'disabled'}</td>
              <td>{a.timeOfLastTrigger === null ? '—' : new Date(a.timeOfLastTrigger).toISOString()}</td>
              <td className={a.lastError === null ? 'muted' : 'error'}>{a.lastError ?? '—'}</td>
              <td>
                <button className="link" onClick={() => setForm({ ...a, description: a.description ?? '' })}>
                  Edit
                </button>{' '}
                <button className="link danger" onClick={() => void remove(a)}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
          {alerts.length === 0 ? (
            <tr>
              <td colSpan={8} className="muted">
                No alerts
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
      <h3>Actions</h3>
      <ul data-testid="action-list">
        {actions.map((a) => (
          <li key={a.id}>
            {a.name} <span className="muted">({a.__typename})</span>
          </li>
        ))}
      </ul>
    </div>
  );
}
