import Database from 'better-sqlite3';
import { existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { TendError } from '../errors.js';
import { createPrivateFile, makePrivateDir, tighten } from '../owner-only.js';
import { BUSY_TIMEOUT_MS, writeTx } from './busy.js';
import { LATEST_VERSION, MIGRATIONS, type Migration } from './migrations.js';
import { sqliteNativeBinding } from './sqlite-binding.js';

export type DB = Database.Database;

export interface OpenOptions {
  /** Refuse to create or migrate: for read-only commands such as `status`. */
  readonly?: boolean;
  migrations?: Migration[];
  /** Hears every statement the connection runs, as SQL (the pass bench counts them per run). */
  trace?: (sql: string) => void;
}

/**
 * The page cache of each connection, in KiB as cache_size takes it (negative). better-sqlite3 builds
 * SQLite with 16 MB where SQLite's own default is 2 MB: a daemon's connection to a big tend.db
 * filled all 16 (the retention's slices, the routes), which was most of what its idle RSS gained
 * with a month of history (15 of 52 MiB anonymous after a GC, against an empty data dir). What the
 * hot statements read fits in 2 MB (the routine list reads routine_latest, migration 9); the pass,
 * the routes and a retention slice measured the same at 2 and 16 MB on a 9 GB tend.db.
 */
export const PAGE_CACHE_KIB = -2000;

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
    if (!opts.readonly) {
      makePrivateDir(dirname(path));
      // SQLite creates a database 0644 and gives its -wal and -shm the database's mode: made 0600
      // first, the three are owner-only.
      createPrivateFile(path);
      tighten(`${path}-wal`);
      tighten(`${path}-shm`);
    }
  }
  // Under Electron: its own build of the native module, or a clear refusal (never Node's binary).
  const nativeBinding = sqliteNativeBinding();
  let db: DB;
  try {
    db = new Database(path, {
      readonly: !!opts.readonly,
      fileMustExist: !!opts.readonly,
      ...(nativeBinding ? { nativeBinding } : {}),
      ...(opts.trace ? { verbose: (sql: unknown) => opts.trace!(String(sql)) } : {}),
    });
  } catch (err) {
    throw refuse(path, err);
  }
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // Reading the schema is the first thing that fails on a file that is not SQLite.
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > latest) {
      throw new TendError(
        'REFUSED',
        `database ${path} has schema version ${version}, newer than this Tend knows (${latest}); ` +
          'it was written by a newer Tend and is left untouched — upgrade Tend',
      );
    }
    // Cheap checks only: the header was read above, and reading the schema parses every table's
    // definition. The full check reads the whole file (17 s cold at 485 MB), so it runs in
    // `tend daemon doctor` and, after an unclean shutdown, off the daemon's event loop (integrity.ts).
    checkSchema(db, path, migrations, version);
    if (!memory && !opts.readonly) db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    db.pragma('synchronous = NORMAL');
    db.pragma(`cache_size = ${PAGE_CACHE_KIB}`);
    if (!opts.readonly) migrate(db, migrations, version);
    return db;
  } catch (err) {
    db.close();
    throw refuse(path, err);
  }
}

/**
 * A file with tables but no Tend version is someone else's database; one at a Tend version must
 * hold the tables its migrations created. Either way it is refused before anything writes to it.
 */
function checkSchema(db: DB, path: string, migrations: Migration[], version: number): void {
  const tables = new Set(db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).pluck().all() as string[]);
  const own = [...tables].filter((t) => !t.startsWith('sqlite_'));
  if (version === 0) {
    if (own.length) throw foreign(path, `it has tables (${own.slice(0, 3).join(', ')}) but no Tend schema version`);
    return;
  }
  const expected = new Set<string>();
  for (const m of migrations.filter((x) => x.version <= version)) {
    for (const [, verb, name] of m.sql.matchAll(/(CREATE|DROP) TABLE (\w+)/g)) {
      if (verb === 'CREATE') expected.add(name!);
      else expected.delete(name!);
    }
  }
  const missing = [...expected].filter((t) => !tables.has(t));
  if (missing.length) throw foreign(path, `schema version ${version} but tables missing (${missing.slice(0, 3).join(', ')})`);
}

function foreign(path: string, why: string): TendError {
  return new TendError('REFUSED', `${path} is not a Tend database or is corrupt (${why}); it is left untouched`);
}

function migrate(db: DB, migrations: Migration[], from: number): void {
  for (const m of migrations) {
    if (m.version <= from) continue;
    // As a writer, and looking again once the lock is ours: another process may have just migrated.
    writeTx(db, () => {
      if ((db.pragma('user_version', { simple: true }) as number) >= m.version) return;
      db.exec(m.sql);
      db.pragma(`user_version = ${m.version}`);
    });
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

/** Whether `name` is a table of this database: an older one opened read-only lacks later migrations' tables. */
export function hasTable(db: DB, name: string): boolean {
  return db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(name) !== undefined;
}

/** Whether `name` is an index of this database (an older one opened read-only has the indexes of its own version). */
export function hasIndex(db: DB, name: string): boolean {
  return db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?`).get(name) !== undefined;
}

export { LATEST_VERSION };
