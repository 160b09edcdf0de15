/** The cluster: nodes, digest partitions and their owners, health. */
import { useEffect, useState } from 'react';
import { gql, getJson } from '../api';

interface ClusterInfo {
  nodes: { id: number; name: string; uri: string; isAvailable: boolean; humioVersion: string; lastHeartbeat: string }[];
  ingestPartitions: { id: number; nodeIds: number[] }[];
}

interface Check {
  name: string;
  status: string;
  statusMessage?: string;
}

interface Health {
  status: string;
  statusMessage?: string;
  oks?: Check[];
  warnings?: Check[];
  downs?: Check[];
}

export function ClusterPage() {
  const [cluster, setCluster] = useState<ClusterInfo | null>(null);
  const [health, setHealth] = useState<Health | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const load = (): void => {
      gql<{ cluster: ClusterInfo }>('{ cluster { nodes { id name uri isAvailable humioVersion lastHeartbeat } ingestPartitions { id nodeIds } } }').then(
        (d) => setCluster(d.cluster),
        (e: Error) => setError(e.message),
      );
      getJson<Health>('/api/v1/health-json').then(setHealth, () => {});
    };
    load();
    const t = setInterval(load, 5000);
    return () => clearInterval(t);
  }, []);
  return (
    <div className="page">
      <h2>Cluster</h2>
      {error !== null ? <div className="error">{error}</div> : null}
      {health !== null ? (
        <div className="health" data-testid="health">
          Health: <span className={`badge ${health.status.toLowerCase()}`}>{health.status}</span>
          <ul>
            {[...(health.downs ?? []), ...(health.warnings ?? []), ...(health.oks ?? [])].map((c) => (
              <li key={c.name}>
                <span className={`badge ${c.status.toLowerCase()}`}>{c.status}</span> {c.name}
                {c.statusMessage ? <span className="muted"> — {c.statusMessage}</span> : null}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      <h3>Nodes</h3>
      <table className="grid" data-testid="nodes">
        <thead>
          <tr>
            <th>Id</th>
            <th>Name</th>
            <th>URI</th>
            <th>State</th>
            <th>Version</th>
            <th>Partitions owned</th>
          </tr>
        </thead>
        <tbody>
          {(cluster?.nodes ?? []).map((n) => (
            <tr key={n.id}>
              <td>{n.id}</td>
              <td>{n.name}</td>
              <td className="mono">{n.uri}</td>
              <td>
                <span className={`badge ${n.isAvailable ? 'ok' : 'down'}`}>{n.isAvailable ? 'up' : 'down'}</span>
              </td>
              <td>{n.humioVersion}</td>
              <td>{cluster?.ingestPartitions.filter((p) => p.nodeIds[0] === n.id).length ?? 0}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Digest partitions</h3>
      <div className="partitions" data-testid="partitions">
        {(cluster?.ingestPartitions ?? []).map((p) => (
          <div key={p.id} className="partition" title={`partition ${p.id}: nodes ${p.nodeIds.join(', ')}`}>
            <span className="muted">{p.id}</span> → {p.nodeIds.join(', ')}
          </div>
        ))}
      </div>
    </div>
  );
}
