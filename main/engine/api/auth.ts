// Tokens: one admin token (api.json, mode 600), and per-computer worker tokens whose SHA-256
// is stored in the workers table. Comparisons are constant-time.
import { chmodSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { paths } from '../datadir.js';
import { nodeCrypto, randomBytes } from '../lazy-crypto.js';
import type { Store } from '../store/store.js';

export interface ApiFile {
  url: string;
  token: string;
  pid: number;
}

export function readApiFile(dataDir: string): ApiFile | null {
  try {
    const a = JSON.parse(readFileSync(paths(dataDir).api, 'utf8')) as ApiFile;
    return typeof a.token === 'string' && typeof a.url === 'string' ? a : null;
  } catch {
    return null;
  }
}

export function writeApiFile(dataDir: string, api: ApiFile): void {
  const p = paths(dataDir).api;
  const tmp = `${p}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(api, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, p);
}

/** The browser address that logs in: the token rides in the fragment, which no request carries. */
export function openAddress(url: string, token: string): string {
  return `${url}/#token=${token}`;
}

export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

export function hashToken(token: string): string {
  return nodeCrypto().createHash('sha256').update(token).digest('hex');
}

/** Constant-time: both sides are hashed to 32 bytes first, so not even the length is compared early. */
export function sameSecret(a: string, b: string): boolean {
  const { createHash, timingSafeEqual } = nodeCrypto();
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/** Issue (or replace) the token of a worker computer; only its hash is stored. */
export function issueWorkerToken(store: Store, computer: string, now: number): string {
  const token = `w_${newToken()}`;
  store.db
    .prepare(`INSERT INTO workers (computer, token_hash, registered_at) VALUES (?, ?, ?) ON CONFLICT (computer) DO UPDATE SET token_hash = excluded.token_hash`)
    .run(computer, hashToken(token), now);
  return token;
}

export type Principal = { kind: 'admin' } | { kind: 'worker'; computer: string };

export function authenticate(store: Store, adminToken: string, header: string | undefined): Principal | null {
  const m = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  if (!m) return null;
  const token = m[1]!;
  if (sameSecret(token, adminToken)) return { kind: 'admin' };
  if (!token.startsWith('w_')) return null;
  const row = store.db.prepare(`SELECT computer FROM workers WHERE token_hash = ?`).get(hashToken(token)) as { computer: string } | undefined;
  return row ? { kind: 'worker', computer: row.computer } : null;
}
