// Each connection's page cache is SQLite's 2 MB, not the 16 MB better-sqlite3 builds in: a daemon's
// connection to a big tend.db fills whatever it is allowed, and idle RSS grew with history by it.
import { expect, it } from 'vitest';
import { openDb, PAGE_CACHE_KIB } from '../../../main/engine/store/db.js';
import { scratch } from '../../helpers/engine-fixture.js';

it('bounds the page cache of every connection, writable or read-only, at 2 MB', () => {
  const dir = scratch('tend-page-cache-');
  try {
    expect(PAGE_CACHE_KIB).toBe(-2000);
    const writable = openDb(dir.db);
    const readonly = openDb(dir.db, { readonly: true });
    expect(writable.pragma('cache_size', { simple: true })).toBe(-2000);
    expect(readonly.pragma('cache_size', { simple: true })).toBe(-2000);
    readonly.close();
    writable.close();
  } finally {
    dir.remove();
  }
});
