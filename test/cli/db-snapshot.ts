// Everything a data dir's database holds, as plain values: to pin that a refused command stored
// nothing at all (no routine, trigger, schedule, job, dependency or event).
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export type Snapshot = Record<string, unknown[]>;

export function dbSnapshot(dataDir: string): Snapshot {
  const file = join(dataDir, 'tend.db');
  if (!existsSync(file)) throw new Error(`${file} does not exist: run a command first so the store is created`);
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`).all() as { name: string }[];
    const out: Snapshot = {};
    for (const { name } of tables) out[name] = db.prepare(`SELECT * FROM "${name}" ORDER BY 1`).all();
    return out;
  } finally {
    db.close();
  }
}
