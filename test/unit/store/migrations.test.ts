// Numbered migrations on user_version, tested on :memory: and on a file; a database Tend cannot
// own (newer schema, not SQLite) is refused with a clear message and left byte-for-byte untouched.
import Database from 'better-sqlite3';
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TendError } from '../../../main/engine/errors.js';
import { openDb } from '../../../main/engine/store/db.js';
import { LATEST_VERSION, MIGRATIONS } from '../../../main/engine/store/migrations.js';
import { Store } from '../../../main/engine/store/store.js';
import { RUN_DURATION_BOUNDS } from '../../../main/engine/store/totals.js';
import { scratch } from '../../helpers/engine-fixture.js';

const TABLES = ['commands', 'events', 'job_deps', 'job_totals', 'jobs', 'leases', 'ledger', 'meta', 'remote_runs', 'routine_cycles', 'routine_deps', 'routine_latest', 'routines', 'run_duration_totals', 'run_links', 'run_quarter_totals', 'run_totals', 'runs', 'schedules', 'triggers', 'webhook_deliveries', 'webhook_trouble', 'webhooks', 'workers'];

function tables(store: Store): string[] {
  return (store.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`).pluck().all() as string[]);
}

function refusal(fn: () => unknown): TendError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(TendError);
    return err as TendError;
  }
  throw new Error('expected a refusal');
}

let dir: ReturnType<typeof scratch>;
beforeEach(() => {
  dir = scratch('tend-store-');
});
afterEach(() => dir.remove());

describe('migrations', () => {
  it('are numbered 1, 2, … with no gaps', () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    expect(LATEST_VERSION).toBe(MIGRATIONS.length);
  });

  it('bring :memory: to the latest version with every table', () => {
    const store = Store.open(':memory:');
    try {
      expect(store.db.pragma('user_version', { simple: true })).toBe(LATEST_VERSION);
      expect(tables(store)).toEqual(TABLES);
      expect(store.db.pragma('foreign_keys', { simple: true })).toBe(1);
      expect(store.routines.defsVersion()).toBe(0);
    } finally {
      store.close();
    }
  });

  it('bring a new file to the latest version, in WAL mode, and reopening it keeps its data and runs nothing again', () => {
    const store = Store.open(dir.db);
    try {
      expect(store.db.pragma('user_version', { simple: true })).toBe(LATEST_VERSION);
      expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(tables(store)).toEqual(TABLES);
      store.routines.ensureSchedule('nightly', 1);
    } finally {
      store.close();
    }
    const again = Store.open(dir.db);
    try {
      expect(again.db.pragma('user_version', { simple: true })).toBe(LATEST_VERSION);
      expect(again.routines.schedule('nightly')).toMatchObject({ name: 'nightly', mode: 'active' });
      expect(again.routines.defsVersion()).toBe(0); // the seed row was not inserted twice
    } finally {
      again.close();
    }
  });

  it('create the data directory if needed', () => {
    const nested = join(dir.dir, 'a', 'b', 'tend.db');
    Store.open(nested).close();
    expect(readdirSync(join(dir.dir, 'a', 'b'))).toContain('tend.db');
  });

  it('a migration that fails rolls back whole, leaving the version where it was', () => {
    const good = { version: 1, description: 'one', sql: 'CREATE TABLE one (x INTEGER) STRICT;' };
    const bad = { version: 2, description: 'two', sql: 'CREATE TABLE two (x INTEGER) STRICT; INSERT INTO nowhere VALUES (1);' };
    const err = refusal(() => openDb(dir.db, { migrations: [good, bad] }));
    expect(err.message).toMatch(/no such table: nowhere/);
    const db = new Database(dir.db);
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(1);
      const names = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).pluck().all();
      expect(names).toContain('one');
      expect(names).not.toContain('two');
    } finally {
      db.close();
    }
  });

  it('a later migration applies on top of an existing file', () => {
    const one = { version: 1, description: 'one', sql: 'CREATE TABLE one (x INTEGER) STRICT; INSERT INTO one VALUES (7);' };
    const two = { version: 2, description: 'two', sql: 'ALTER TABLE one ADD COLUMN y TEXT;' };
    openDb(dir.db, { migrations: [one] }).close();
    const db = openDb(dir.db, { migrations: [one, two] });
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(2);
      expect(db.prepare('SELECT x, y FROM one').all()).toEqual([{ x: 7, y: null }]);
    } finally {
      db.close();
    }
  });
});

describe('a database Tend cannot own is refused and left untouched', () => {
  function snapshot(): Map<string, Buffer> {
    return new Map(readdirSync(dir.dir).map((n) => [n, readFileSync(join(dir.dir, n))]));
  }

  it('a newer-than-known user_version', () => {
    const db = new Database(dir.db);
    db.exec('CREATE TABLE future (x INTEGER); INSERT INTO future VALUES (1);');
    db.pragma(`user_version = ${LATEST_VERSION + 1}`);
    db.close();
    const before = snapshot();

    const err = refusal(() => Store.open(dir.db));
    expect(err.code).toBe('REFUSED');
    expect(err.message).toContain(`schema version ${LATEST_VERSION + 1}, newer than this Tend knows (${LATEST_VERSION})`);
    expect(err.message).toMatch(/left untouched — upgrade Tend/);
    expect(snapshot()).toEqual(before);
  });

  it('a file that is not SQLite', () => {
    writeFileSync(dir.db, 'this is a grocery list, not a database\n'.repeat(200));
    const before = snapshot();
    const err = refusal(() => Store.open(dir.db));
    expect(err.code).toBe('REFUSED');
    expect(err.message).toMatch(/is not a Tend database or is corrupt \(SQLITE_NOTADB\); it is left untouched/);
    expect(snapshot()).toEqual(before);
  });

  it('a directory where the database should be', () => {
    mkdirSync(dir.db);
    const err = refusal(() => Store.open(dir.db));
    expect(err.message).toMatch(/is a directory/);
  });

  it('read-only open of a missing database creates nothing', () => {
    const err = refusal(() => Store.open(dir.db, { readonly: true }));
    expect(err.code).toBe('REFUSED');
    expect(readdirSync(dir.dir)).toEqual([]);
  });
});

describe('migration 5: totals the metrics read instead of the history', () => {
  const run = (id: string, status: string, o: { startedAt?: number | null; endedAt?: number | null; kind?: string } = {}) =>
    `INSERT INTO runs (id, routine_id, kind, cycle, scheduled_at, status, created_at, started_at, ended_at)
     VALUES ('${id}', 'me@h:r', '${o.kind ?? 'batch'}', '2026-01-05', 0, '${status}', 0, ${o.startedAt ?? 'NULL'}, ${o.endedAt ?? 'NULL'})`;

  it('have one column per bucket of the histogram the metrics expose', () => {
    const store = Store.open(':memory:');
    const columns = (store.db.prepare(`SELECT name FROM pragma_table_info('run_duration_totals') WHERE name GLOB 'b[0-9]*'`).pluck().all() as string[]);
    expect(columns).toHaveLength(RUN_DURATION_BOUNDS.length + 1);
    store.close();
  });

  it('are seeded from the runs kept and the tallies of removed ones, then counted as runs finish', () => {
    const raw = openDb(dir.db, { migrations: MIGRATIONS.slice(0, 4) });
    raw.exec(`${run('a', 'COMPLETED', { startedAt: 0, endedAt: 2000 })}; ${run('b', 'ERROR', { startedAt: 0, endedAt: 100_000 })}; ${run('c', 'RUNNING', { startedAt: 0 })};
      INSERT INTO run_tallies VALUES ('me@h:r', 'batch', 'COMPLETED', 5, 7000);
      INSERT INTO duration_tallies VALUES ('me@h:r', '[1,0,4,0,0,0,0,0,0,0,0,0,0,0,0]', 50, 5);`);
    raw.close();
    const store = Store.open(dir.db);
    try {
      expect(store.history.runTotals()).toEqual([
        { routineId: 'me@h:r', kind: 'batch', status: 'COMPLETED', n: 6, lastEndedAt: 7000 },
        { routineId: 'me@h:r', kind: 'batch', status: 'ERROR', n: 1, lastEndedAt: null },
      ]);
      // 2 s in the 5 s bucket, 100 s in the 120 s bucket, and the removed ones' buckets.
      expect(store.history.durationTotals()).toEqual([{ routineId: 'me@h:r', buckets: [1, 1, 4, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0], sum: 152, n: 7 }]);

      expect(store.runs.cas('c', ['RUNNING'], 'COMPLETED', { endedAt: 9000 })).toBe(true);
      expect(store.runs.cas('c', ['RUNNING'], 'COMPLETED', { endedAt: 9500 })).toBe(false);
      store.runs.insert({ id: 'd', routineId: 'me@h:r', kind: 'batch', cycle: '2026-01-05', scheduledAt: 0, attempt: 1, status: 'CANCELLED', reason: null, exitCode: null, signal: null, backend: null, runDir: null, manual: false, notBefore: null, createdAt: 0, startedAt: null, endedAt: null, heartbeatAt: null });
      const totals = new Map(store.history.runTotals().map((t) => [t.status, t]));
      expect(totals.get('COMPLETED')).toMatchObject({ n: 7, lastEndedAt: 9000 });
      expect(totals.get('CANCELLED')).toMatchObject({ n: 1 });
      expect(store.history.durationTotals()[0]).toMatchObject({ n: 8, sum: 161 });
      // Removing history leaves the totals as they are.
      const rid = store.db.prepare(`SELECT rowid FROM runs WHERE id = 'a'`).pluck().get() as number;
      store.tx(() => store.history.removeRuns([{ rid, id: 'a', routineId: 'me@h:r', kind: 'batch', status: 'COMPLETED', backend: null, runDir: null, startedAt: 0, endedAt: 2000 }]));
      expect(new Map(store.history.runTotals().map((t) => [t.status, t.n])).get('COMPLETED')).toBe(7);
    } finally {
      store.close();
    }
  });
});

describe('migration 8: one index of unfinished runs', () => {
  const activeIndexes = (db: Database.Database) =>
    db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'runs' AND sql LIKE '%WHERE status IN%' ORDER BY name`).pluck().all() as string[];

  it('drops runs_active: an unfinished run changing status rewrites one index entry, and its reads still find it', () => {
    const before = openDb(dir.db, { migrations: MIGRATIONS.filter((m) => m.version < 8) });
    before.prepare(`INSERT INTO runs (id, routine_id, kind, cycle, scheduled_at, status, created_at) VALUES ('r1', 'me@h:r', 'batch', '2026-01-05', 1, 'PENDING', 1)`).run();
    expect(activeIndexes(before)).toEqual(['runs_active', 'runs_routine_active']);
    before.close();
    const store = Store.open(dir.db);
    try {
      expect(activeIndexes(store.db)).toEqual(['runs_routine_active']);
      expect(store.runs.active().map((r) => r.id)).toEqual(['r1']);
      expect(store.runs.cas('r1', ['PENDING'], 'STARTING')).toBe(true);
      expect(store.runs.active().map((r) => [r.id, r.status])).toEqual([['r1', 'STARTING']]);
      expect(store.runs.countByStatus(0)).toEqual({ STARTING: 1 });
    } finally {
      store.close();
    }
  });
});

describe('migration 13: the index of ended runs narrowed to realtime exits', () => {
  it('holds the exits alone, and the count of exits in a window reads it', () => {
    const before = openDb(dir.db, { migrations: MIGRATIONS.filter((m) => m.version < 13) });
    const insert = before.prepare(`INSERT INTO runs (id, routine_id, kind, cycle, scheduled_at, status, created_at, ended_at) VALUES (?, ?, ?, '2026-01-05', 1, ?, 1, ?)`);
    for (const [id, routine, kind, status, ended] of [
      ['b1', 'me@h:batch', 'batch', 'COMPLETED', 20],
      ['r1', 'me@h:rt', 'realtime', 'EXITED', 20],
      ['r2', 'me@h:rt', 'realtime', 'EXITED', 30],
      ['r0', 'me@h:rt', 'realtime', 'EXITED', 5],
      ['s1', 'me@h:rt', 'realtime', 'STOPPED', 25],
    ] as const) {
      insert.run(id, routine, kind, status, ended);
    }
    before.close();
    const store = Store.open(dir.db);
    try {
      const names = store.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND name IN ('runs_ended', 'runs_exited')`).pluck().all();
      expect(names).toEqual(['runs_exited']);
      const entries = store.db.prepare(`SELECT SUM(ncell) FROM dbstat WHERE name = 'runs_exited' AND pagetype = 'leaf'`).pluck().get();
      expect(entries).toBe(3);
      expect(store.runs.realtimeExits(10, 20)).toEqual([{ routineId: 'me@h:rt', exits: 2, lastAt: 30 }]);
    } finally {
      store.close();
    }
  });
});
