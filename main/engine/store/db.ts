import Database from 'better-sqlite3';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { TendError } from '../errors.js';
import { LATEST_VERSION, MIGRATIONS, type Migration } from './migrations.js';

export type DB = Database.Database;

export interface OpenOptions {
  /** Refuse to create or migrate: for read-only commands such as `status`. */
  readonly?: boolean;
  migrations?: Migration[];
}

/**
 * Open (and migrate) the store. A file that is not a SQLite database, is corrupt, or was written by
 * a newer Tend is refused with a clear message and never touched.
 */
export function openDb(path: string, opts: OpenOptions = {}): DB {
  const migrations = opts.migrations ?? MIGRATIONS;
  const latest = migrations.length ? migrations[migrations.length - 1]!.version : 0;
  const memory = path === ':memory:';
  if (!memory) {
    if (existsSync(path) && statSync(path).isDirectory()) {
      throw new TendError('REFUSED', `database ${path} is a directory`);
    }
    if (!opts.readonly) mkdirSync(dirname(path), { recursive: true });
  }
  let db: DB;
  try {
    db = new Database(path, { readonly: !!opts.readonly, fileMustExist: !!opts.readonly });
  } catch (err) {
    throw refuse(path, err);
  }
  try {
    db.pragma('busy_timeout = 5000');
    // Reading the schema is the first thing that fails on a file that is not SQLite.
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > latest) {
      throw new TendError(
        'REFUSED',
        `database ${path} has schema version ${version}, newer than this Tend knows (${latest}); ` +
          'it was written by a newer Tend and is left untouched — upgrade Tend',
      );
    }
    if (!memory && !opts.readonly) db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    db.pragma('synchronous = NORMAL');
    if (!opts.readonly) {
      if (version > 0 && !memory) quickCheck(db, path);
      migrate(db, migrations, version);
    }
    return db;
  } catch (err) {
    db.close();
    throw refuse(path, err);
  }
}

function quickCheck(db: DB, path: string): void {
  const rows = db.pragma('quick_check') as { quick_check: string }[];
  if (rows.length !== 1 || rows[0]!.quick_check !== 'ok') {
    throw new TendError(
      'REFUSED',
      `database ${path} failed its integrity check (${rows.map((r) => r.quick_check).slice(0, 3).join('; ')}); ` +
        'it is left untouched — restore it from a backup or move it aside',
    );
  }
}

function migrate(db: DB, migrations: Migration[], from: number): void {
  for (const m of migrations) {
    if (m.version <= from) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.pragma(`user_version = ${m.version}`);
    })();
  }
}

function refuse(path: string, err: unknown): TendError {
  if (err instanceof TendError) return err;
  const code = (err as { code?: string }).code ?? '';
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
    return new TendError('REFUSED', `${path} is not a Tend database or is corrupt (${code}); it is left untouched`);
  }
  if (code === 'SQLITE_CANTOPEN') {
    return new TendError('REFUSED', `cannot open database ${path} (${code})`);
  }
  return new TendError('REFUSED', `cannot open database ${path}: ${(err as Error).message ?? String(err)}`);
}

export { LATEST_VERSION };
