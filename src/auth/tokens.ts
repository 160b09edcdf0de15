/**
 * Token material. Tokens are 256-bit random values (ingest tokens: random UUIDs, the shape the
 * product's clients expect); only their SHA-256 digests are kept for authentication. Looking a
 * digest up in a map reveals nothing about the token's bytes; the final comparison is constant-time.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

export function newApiToken(): string {
  return randomBytes(32).toString('base64url');
}

export function newIngestToken(): string {
  return randomUUID();
}

export function newId(): string {
  return randomBytes(16).toString('base64url');
}

export function tokenDigest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function digestsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}
