/**
 * The cluster's shared secret (docs/cluster-protocol.md, "Authentication"): `[cluster] secret`, or
 * the trimmed content of `[cluster] secret_file`. The config check has already refused a cluster
 * without one unless it is a development cluster on loopback addresses (`insecure_loopback`).
 */
import { readFile } from 'node:fs/promises';
import { LogsvcError } from '../lib/errors.js';

export async function loadClusterSecret(c: { secret: string; secret_file: string }): Promise<Buffer | null> {
  if (c.secret !== '') return Buffer.from(c.secret, 'utf8');
  if (c.secret_file === '') return null;
  let text: string;
  try {
    text = await readFile(c.secret_file, 'utf8');
  } catch (err) {
    throw new LogsvcError('E_CONFIG_INVALID', `cluster.secret_file: cannot read ${c.secret_file}: ${(err as Error).message}`);
  }
  const secret = text.trim();
  if (!/^\S{16,1024}$/.test(secret)) throw new LogsvcError('E_CONFIG_INVALID', `cluster.secret_file: ${c.secret_file} must hold 16 to 1024 characters without spaces (it holds ${secret.length}; the value is not shown)`);
  return Buffer.from(secret, 'utf8');
}
