// Damage a real tend.db the way a crash or a bad disk can: one page overwritten.
import Database from 'better-sqlite3';
import { closeSync, openSync, writeSync } from 'node:fs';

/** Overwrite the first page of an index nothing reads on open: only a page-by-page check sees it. */
export function damageIndex(db: string, index = 'job_deps_reverse'): void {
  const raw = new Database(db);
  const pageSize = raw.pragma('page_size', { simple: true }) as number;
  const root = raw.prepare(`SELECT rootpage FROM sqlite_master WHERE name = ?`).pluck().get(index) as number;
  raw.pragma('journal_mode = DELETE'); // the WAL is folded in, so the write below is the file's last word
  raw.close();
  const fd = openSync(db, 'r+');
  try {
    writeSync(fd, Buffer.alloc(pageSize, 0x55), 0, pageSize, (root - 1) * pageSize);
  } finally {
    closeSync(fd);
  }
}
