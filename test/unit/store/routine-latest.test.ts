// Each routine's newest run is kept in routine_latest as runs are inserted (store/latest.ts,
// migration 9), by run time (the routine list, the doctor) and by creation (the metrics' routine
// states), so those read a row per routine instead of seeking into every routine's history. What
// they answer must be what the seeks answered: out-of-order inserts, ties, rollbacks, an upgrade.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRow } from '../../../main/engine/domain/types.js';
import { openDb } from '../../../main/engine/store/db.js';
import { MIGRATIONS } from '../../../main/engine/store/migrations.js';
import { Store } from '../../../main/engine/store/store.js';

const A = 'me@h:a';
const B = 'me@h:b';
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function run(id: string, routineId: string, scheduledAt: number, createdAt: number, status: RunRow['status'] = 'COMPLETED'): RunRow {
  return { id, routineId, kind: 'batch', cycle: '2026-01-05', scheduledAt, attempt: 1, status, reason: null, exitCode: null, signal: null, backend: null, runDir: null, manual: false, notBefore: null, createdAt, startedAt: null, endedAt: null, heartbeatAt: null };
}

function define(store: Store, ...ids: string[]): void {
  const db = store.db;
  db.prepare(`INSERT OR IGNORE INTO schedules (name, created_at) VALUES ('default', 0)`).run();
  for (const id of ids) {
    db.prepare(`INSERT INTO routines (id, schedule, name, computer, kind, def, seq, created_at, updated_at) VALUES (?, 'default', ?, 'me@h', 'batch', ?, 1, 0, 0)`).run(
      id,
      id,
      JSON.stringify({ id, name: id, schedule: 'default', computer: 'me@h', kind: 'batch', external: false, command: 'true', args: [], env: {} }),
    );
  }
}

/** What the seeks the kept rows replace answer: the newest by run time and by creation. */
function sought(store: Store, id: string): { runTime: string | null; creation: string | null } {
  const one = (order: string) => (store.db.prepare(`SELECT id FROM runs WHERE routine_id = ? ORDER BY ${order} DESC, rowid DESC LIMIT 1`).pluck().get(id) as string | undefined) ?? null;
  return { runTime: one('scheduled_at'), creation: one('created_at') };
}

/** What the routine list and the metrics read. */
function read(store: Store): Record<string, { runTime: string | null; creation: string | null }> {
  const list = store.runs.latestPerRoutine();
  const states = store.db.prepare(`SELECT d.id, (SELECT r.id FROM runs r WHERE r.rowid = ${store.runs.newest.newestRowid('creation')}) AS creation FROM routines d ORDER BY d.id`).all() as { id: string; creation: string | null }[];
  return Object.fromEntries(states.map((s) => [s.id, { runTime: list.get(s.id)?.id ?? null, creation: s.creation }]));
}

function kept(store: Store): Record<string, [number, number]> {
  const rows = store.db.prepare(`SELECT routine_id, run_rowid, created_rowid FROM routine_latest ORDER BY routine_id`).all() as { routine_id: string; run_rowid: number; created_rowid: number }[];
  return Object.fromEntries(rows.map((r) => [r.routine_id, [r.run_rowid, r.created_rowid]]));
}

describe('routine_latest', () => {
  it('keeps each routine newest run by run time and by creation as runs are inserted, in a transaction or not', () => {
    const store = Store.open(':memory:');
    define(store, A, B);
    store.runs.insert(run('a1', A, 100, 100));
    store.tx(() => {
      store.runs.insert(run('a2', A, 200, 200));
      // A catch-up of an earlier run time, created later: newest by creation, not by run time.
      store.runs.insert(run('a0', A, 50, 300));
      store.runs.insert(run('b1', B, 100, 100));
      // Same run time (a retry of the same instance): the later insert wins, as rowid breaks the tie.
      store.runs.insert(run('b1-retry', B, 100, 100, 'PENDING'));
    });
    store.runs.insert(run('b-old', B, 10, 10));
    expect(read(store)).toEqual({ [A]: { runTime: 'a2', creation: 'a0' }, [B]: { runTime: 'b1-retry', creation: 'b1-retry' } });
    for (const id of [A, B]) expect(read(store)[id]).toEqual(sought(store, id));
    // One row per routine, naming those runs: the list reads it, not each routine's history.
    const rowid = (id: string) => store.db.prepare(`SELECT rowid FROM runs WHERE id = ?`).pluck().get(id) as number;
    expect(kept(store)).toEqual({ [A]: [rowid('a2'), rowid('a0')], [B]: [rowid('b1-retry'), rowid('b1-retry')] });
    store.close();
  });

  it('an insert rolled back leaves the kept row as it was', () => {
    const store = Store.open(':memory:');
    define(store, A);
    store.runs.insert(run('a1', A, 100, 100));
    const before = kept(store);
    expect(() =>
      store.tx(() => {
        store.runs.insert(run('a2', A, 200, 200));
        throw new Error('rolled back');
      }),
    ).toThrow('rolled back');
    expect(kept(store)).toEqual(before);
    expect(read(store)).toEqual({ [A]: { runTime: 'a1', creation: 'a1' } });
  });

  it('a routine whose kept newest run by run time is gone is answered by its newest by creation; one without a kept row has none', () => {
    const store = Store.open(':memory:');
    define(store, A, B);
    store.runs.insert(run('a1', A, 100, 100));
    // A catch-up: created after a1 for an earlier time.
    store.runs.insert(run('a0', A, 50, 200));
    expect(read(store)).toEqual({ [A]: { runTime: 'a1', creation: 'a0' }, [B]: { runTime: null, creation: null } });
    // Written behind the store's back: A's run by run time is gone; B has a run but no row (no index
    // of runs by routine is left to seek it, migration 14).
    store.db.prepare(`DELETE FROM runs WHERE id = 'a1'`).run();
    store.db.prepare(`INSERT INTO runs (id, routine_id, kind, cycle, scheduled_at, status, created_at) VALUES ('b1', ?, 'batch', '2026-01-05', 5, 'COMPLETED', 5)`).run(B);
    expect(kept(store)[B]).toBeUndefined();
    expect(read(store)).toEqual({ [A]: { runTime: 'a0', creation: 'a0' }, [B]: { runTime: null, creation: null } });
  });

  it('migration 9 seeds the newest runs of the routines defined from the runs kept', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tend-latest-'));
    dirs.push(dir);
    const file = join(dir, 'tend.db');
    // Written as the Tend before it: rows alone (a removed routine's history stays, unseeded).
    const before = openDb(file, { migrations: MIGRATIONS.filter((m) => m.version < 9) });
    define(new Store(before), A, B);
    const insert = before.prepare(`INSERT INTO runs (id, routine_id, kind, cycle, scheduled_at, status, created_at) VALUES (?, ?, 'batch', '2026-01-05', ?, 'COMPLETED', ?)`);
    for (const [id, routine, at, created] of [['a1', A, 100, 100], ['a2', A, 200, 200], ['a0', A, 50, 300], ['b1', B, 100, 100], ['gone1', 'me@h:removed', 900, 900]] as const) insert.run(id, routine, at, created);
    before.close();
    const store = Store.open(file);
    const rowid = (id: string) => store.db.prepare(`SELECT rowid FROM runs WHERE id = ?`).pluck().get(id) as number;
    // The removed routine's row is migration 11's (below).
    expect(kept(store)).toEqual({ [A]: [rowid('a2'), rowid('a0')], [B]: [rowid('b1'), rowid('b1')], 'me@h:removed': [rowid('gone1'), rowid('gone1')] });
    expect(read(store)).toEqual({ [A]: { runTime: 'a2', creation: 'a0' }, [B]: { runTime: 'b1', creation: 'b1' } });
    store.close();
  });

  it("migration 11 keeps a row for every routine with runs, a removed one's too: with runs_routine gone, the newest run by run time is read from it and the retention keeps it", () => {
    const dir = mkdtempSync(join(tmpdir(), 'tend-latest-'));
    dirs.push(dir);
    const file = join(dir, 'tend.db');
    const before = openDb(file, { migrations: MIGRATIONS.filter((m) => m.version < 11) });
    const old = new Store(before);
    define(old, A);
    // A's run and runs of a routine removed before migration 9, which seeded only the routines defined.
    const insert = before.prepare(`INSERT INTO runs (id, routine_id, kind, cycle, scheduled_at, status, created_at) VALUES (?, ?, 'batch', ?, ?, 'COMPLETED', ?)`);
    for (const [id, routine, cycle, at, created] of [['a1', A, '2026-01-05', 100, 100], ['g1', 'me@h:removed', '2026-01-04', 100, 100], ['g2', 'me@h:removed', '2026-01-05', 200, 200], ['g0', 'me@h:removed', '2026-01-03', 50, 300]] as const) {
      insert.run(id, routine, cycle, at, created);
    }
    before.prepare(`DELETE FROM routine_latest WHERE routine_id = 'me@h:removed'`).run();
    before.close();
    const store = Store.open(file);
    const rowid = (id: string) => store.db.prepare(`SELECT rowid FROM runs WHERE id = ?`).pluck().get(id) as number;
    expect(kept(store)).toEqual({ [A]: [rowid('a1'), rowid('a1')], 'me@h:removed': [rowid('g2'), rowid('g0')] });
    const indexes = store.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND name IN ('runs_routine', 'runs_created_status', 'events_routine')`).pluck().all();
    expect(indexes).toEqual([]);
    expect(store.runs.latestScheduled('me@h:removed')?.id).toBe('g2');
    expect(store.runs.latestScheduled(A)?.id).toBe('a1');
    expect(store.runs.latestScheduled('me@h:never')).toBeNull();
    // Every finished run is old enough to go, but each routine's newest by run time stays, and its
    // newest by creation (g0, a catch-up: the head of its chain of runs, migration 14).
    expect(store.history.oldRuns(10_000, 100).map((r) => r.id).sort()).toEqual(['g1']);
    store.close();
  });
});
