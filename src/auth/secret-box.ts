/**
 * Sealing values that must be shown again later (ingest tokens are listed to repository members, as
 * the product does) without storing them in clear in global state: AES-256-GCM under a key kept in
 * `<data-dir>/state.key` (mode 0600), created at first start.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LogsvcError } from '../lib/errors.js';
import { atomicWriteFile } from '../storage/index.js';

const KEY_FILE = 'state.key';

export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  static async openOrCreate(dataDir: string): Promise<SecretBox> {
    const path = join(dataDir, KEY_FILE);
    try {
      const key = Buffer.from((await readFile(path, 'utf8')).trim(), 'base64');
      if (key.length !== 32) throw new LogsvcError('E_STATE_CORRUPT', `${path}: not a 256-bit key`);
      return new SecretBox(key);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const key = randomBytes(32);
    await atomicWriteFile(path, `${key.toString('base64')}\n`, 0o600);
    return new SecretBox(key);
  }

  static forTest(key: Buffer = randomBytes(32)): SecretBox {
    return new SecretBox(key);
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return Buffer.concat([iv, c.getAuthTag(), body]).toString('base64');
  }

  open(sealed: string): string {
    const raw = Buffer.from(sealed, 'base64');
    const d = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    d.setAuthTag(raw.subarray(12, 28));
    try {
      return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
    } catch {
      throw new LogsvcError('E_STATE_CORRUPT', 'a sealed secret in global state cannot be opened with this node\'s state.key');
    }
  }
}
