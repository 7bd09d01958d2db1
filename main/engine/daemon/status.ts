// `tend daemon status`: ownership, heartbeat freshness, queue counts, next due work, recent
// failures. Reads the state file and the database (read-only); starts nothing.
import { existsSync } from 'node:fs';
import { paths } from '../datadir.js';
import type { Store } from '../store/store.js';
import { statusCounts } from './status-counts.js';
import { readOwner, statusFrom, type DaemonStatus } from './status-read.js';

export type { DaemonStatus } from './status-read.js';

export function daemonStatus(dataDir: string, store: Store | null, now: number): DaemonStatus {
  let counts = null;
  if (store) {
    const { dayEnds: _ends, ...c } = statusCounts(store, now);
    counts = c;
  }
  return statusFrom(dataDir, readOwner(dataDir, now), now, counts);
}

export function hasDatabase(dataDir: string): boolean {
  return existsSync(paths(dataDir).db);
}
