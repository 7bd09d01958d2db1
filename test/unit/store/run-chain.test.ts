// A routine's runs by creation, newest first, are a chain through the runs (store/chain.ts,
// migration 14) instead of an index keyed by routine. What the chain answers (latest, history,
// recentRealtime) must be what `ORDER BY created_at DESC, rowid DESC` over the routine's runs
// answers: ties, a clock that steps back, transactions and savepoints rolled back, the retention
// removing runs around kept ones, a database upgraded with runs in it. And an insert must write no
// page that deepens with history.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRow } from '../../../main/engine/domain/types.js';
import { openDb } from '../../../main/engine/store/db.js';
import { MIGRATIONS } from '../../../main/engine/store/migrations.js';
import { Store } from '../../../main/engine/store/store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'tend-chain-'));
  dirs.push(d);
  return d;
};

const ROUTINES = ['me@h:a', 'me@h:b', 'me@h:c', 'me@h:d'];

function run(id: string, routineId: string, createdAt: number, o: Partial<RunRow> = {}): RunRow {
  return { id, routineId, kind: 'batch', cycle: '2026-01-05', scheduledAt: createdAt, attempt: 1, status: 'COMPLETED', reason: null, exitCode: null, signal: null, backend: null, runDir: null, manual: false, notBefore: null, createdAt, startedAt: null, endedAt: createdAt, heartbeatAt: null, ...o };
}

/** A small deterministic generator (tests must give the same runs every time). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1_664_525 + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

/** What the dropped index answered: the routine's runs by creation, newest first, read by sorting them all. */
function reference(store: Store, routineId: string, limit: number, realtimeOnly = false): string[] {
  return store.db
    .prepare(`SELECT id FROM runs NOT INDEXED WHERE routine_id = ? ${realtimeOnly ? `AND kind = 'realtime'` : ''} ORDER BY created_at DESC, rowid DESC LIMIT ?`)
    .pluck()
    .all(routineId, limit) as string[];
}

function expectSameAsSorted(store: Store, where: string): void {
  for (const r of [...ROUTINES, 'me@h:none']) {
    for (const n of [1, 2, 5, 50, 10_000]) {
      expect(store.runs.history(r, n).map((x) => x.id), `${where}: history(${r}, ${n})`).toEqual(reference(store, r, n));
      expect(store.runs.recentRealtime(r, n).map((x) => x.id), `${where}: recentRealtime(${r}, ${n})`).toEqual(reference(store, r, n, true));
    }
    expect(store.runs.latest(r)?.id ?? null, `${where}: latest(${r})`).toBe(reference(store, r, 1)[0] ?? null);
  }
}

/** Inserts like the pass's: in and out of transactions, several of a routine in one, some rolled back, ties, a clock that steps back now and then. */
/** `together`: each transaction's inserts go through insertingFor, with the heads of some routines (not all) read first. */
function insertMany(store: Store, rnd: () => number, n: number, t0: number, prefix: string, check?: (where: string) => void, together = false): number {
  let t = t0;
  let i = 0;
  const one = () => {
    const routineId = ROUTINES[Math.floor(rnd() * ROUTINES.length)]!;
    const x = rnd();
    // Mostly forward; a tie now and then; a step back (NTP) once in a while.
    t += x < 0.15 ? 0 : x < 0.25 ? -Math.floor(rnd() * 5_000) : Math.floor(rnd() * 3_000);
    store.runs.insert(run(`${prefix}${i++}`, routineId, t, { kind: rnd() < 0.3 ? 'realtime' : 'batch' }));
  };
  while (i < n) {
    const x = rnd();
    if (x < 0.3) one();
    else {
      const body = (): void => {
        for (let k = Math.floor(rnd() * 6); k >= 0; k--) one();
        if (rnd() < 0.3) {
          try {
            store.tx(() => {
              one();
              one();
              check?.('inside a savepoint, before it rolls back');
              throw new Error('rolled back');
            });
          } catch {
            // The savepoint's runs are gone; the transaction goes on.
          }
          one();
        }
        check?.('inside a transaction');
        if (rnd() < 0.1) throw Object.assign(new Error('whole'), { whole: true });
      };
      store.tx(() => (together ? store.runs.insertingFor(ROUTINES.slice(0, 3), body) : body()));
    }
  }
  return t;
}

function tolerant(fn: () => void): void {
  try {
    fn();
  } catch (err) {
    if (!(err as { whole?: boolean }).whole) throw err;
  }
}

describe('the chain of a routine’s runs', () => {
  it('answers latest, history and recentRealtime as sorting the routine’s runs by creation does, inside transactions and after rollbacks, with ties and a clock that steps back', () => {
    const store = Store.open(':memory:');
    const rnd = random(7);
    let checks = 0;
    for (let round = 0; round < 20; round++) {
      tolerant(() =>
        insertMany(store, rnd, 30, 1_000_000 + round * 100_000, `r${round}-`, (where) => {
          if (rnd() < 0.2) {
            checks++;
            expectSameAsSorted(store, where);
          }
        }),
      );
      expectSameAsSorted(store, `after round ${round}`);
    }
    expect(checks).toBeGreaterThan(5);
    expect(store.db.prepare(`SELECT COUNT(*) FROM runs`).pluck().get()).toBeGreaterThan(200);
  });

  it('answers the same when a transaction’s inserts place their runs from heads read together first (insertingFor), rollbacks and a clock that steps back included', () => {
    const store = Store.open(':memory:');
    const rnd = random(11);
    for (let round = 0; round < 20; round++) {
      tolerant(() => insertMany(store, rnd, 30, 1_000_000 + round * 100_000, `r${round}-`, (where) => expectSameAsSorted(store, where), true));
      expectSameAsSorted(store, `after round ${round}`);
    }
    expect(store.db.prepare(`SELECT COUNT(*) FROM runs`).pluck().get()).toBeGreaterThan(200);
  });

  it('inserts of routines whose heads were read together read no head one by one', () => {
    const heard: string[] = [];
    const store = Store.open(':memory:', { trace: (sql) => heard.push(sql) });
    try {
      store.tx(() => { for (const r of ROUTINES) store.runs.insert(run(`first-${r}`, r, 1000)); });
      heard.length = 0;
      store.tx(() => store.runs.insertingFor(ROUTINES, () => { for (const r of ROUTINES) store.runs.insert(run(`second-${r}`, r, 2000)); }));
      const headReads = heard.filter((sql) => /FROM routine_latest WHERE routine_id (=|IN)/.test(sql));
      expect(headReads).toHaveLength(1);
      for (const r of ROUTINES) expect(store.runs.history(r, 5).map((x) => x.id)).toEqual([`second-${r}`, `first-${r}`]);
    } finally {
      store.close();
    }
  });

  it('keeps its answers while the retention removes runs, oldest first, around the runs it keeps (unfinished ones), and leaves no link behind once they go', () => {
    const store = Store.open(':memory:');
    const rnd = random(11);
    let t = 1_000_000;
    for (let day = 0; day < 12; day++) {
      const from = t + 1_000;
      tolerant(() => (t = insertMany(store, rnd, 40, from, `d${day}-`)));
      t = Math.max(t, from + 200_000);
      // Now and then a run that stays unfinished for days: the retention keeps it, and removes those around it.
      if (day % 3 === 0) store.runs.insert(run(`stuck${day}`, ROUTINES[day % ROUTINES.length]!, (t += 10), { status: 'RUNNING', endedAt: null }));
      const cutoff = t - 30_000;
      for (;;) {
        const old = store.history.oldRuns(cutoff, 7);
        if (old.length === 0) break;
        store.tx(() => store.history.removeRuns(old));
        expectSameAsSorted(store, `day ${day}, after removing ${old.map((o) => o.id).join(' ')}`);
      }
    }
    expect(store.db.prepare(`SELECT COUNT(*) FROM runs WHERE id LIKE 'd0-%'`).pluck().get()).toBe(0);
    const links = () => store.db.prepare(`SELECT COUNT(*) FROM run_links`).pluck().get() as number;
    expect(links()).toBeGreaterThan(0);
    // The stuck runs finish; once every old run has gone, so have the links left in their place.
    store.db.prepare(`UPDATE runs SET status = 'COMPLETED', ended_at = created_at WHERE id LIKE 'stuck%'`).run();
    for (let old = store.history.oldRuns(t + 1, 50); old.length; old = store.history.oldRuns(t + 1, 50)) store.tx(() => store.history.removeRuns(old));
    expectSameAsSorted(store, 'all removed but the newest');
    expect(store.db.prepare(`SELECT COUNT(*) FROM runs`).pluck().get()).toBeLessThanOrEqual(2 * ROUTINES.length);
    // Left at most one a routine: the link of the oldest removed run to a kept one, should the routine's successor still point at it.
    expect(links()).toBeLessThanOrEqual(ROUTINES.length);
  });

  it('is never cut by the retention at its head: a routine’s newest run by creation (a catch-up, older by run time) stays', () => {
    const store = Store.open(':memory:');
    store.runs.insert(run('a1', 'me@h:a', 100, { scheduledAt: 100 }));
    store.runs.insert(run('a0', 'me@h:a', 200, { scheduledAt: 50 }));
    store.runs.insert(run('b1', 'me@h:b', 150));
    expect(store.history.oldRuns(10_000, 10).map((r) => r.id)).toEqual([]);
    store.runs.insert(run('a2', 'me@h:a', 300, { scheduledAt: 300 }));
    expect(store.history.oldRuns(10_000, 10).map((r) => r.id)).toEqual(['a1', 'a0']);
  });

  it('migration 14 chains the runs an older database holds, and drops the last index of runs keyed by routine', () => {
    const file = join(tempDir(), 'tend.db');
    const before = openDb(file, { migrations: MIGRATIONS.filter((m) => m.version < 14) });
    const insert = before.prepare(`INSERT INTO runs (id, routine_id, kind, cycle, scheduled_at, status, created_at, ended_at) VALUES (?, ?, ?, '2026-01-05', ?, ?, ?, ?)`);
    const rnd = random(3);
    let t = 1_000;
    for (let i = 0; i < 300; i++) {
      const x = rnd();
      t += x < 0.15 ? 0 : x < 0.25 ? -Math.floor(rnd() * 500) : Math.floor(rnd() * 300);
      insert.run(`old${i}`, ROUTINES[Math.floor(rnd() * ROUTINES.length)]!, rnd() < 0.3 ? 'realtime' : 'batch', t, 'COMPLETED', t, t);
    }
    // routine_latest as the store before kept it (migration 11 seeds it the same way).
    before.exec(`DELETE FROM routine_latest; INSERT INTO routine_latest (routine_id, scheduled_at, run_rowid, created_at, created_rowid)
      SELECT d.routine_id, c.scheduled_at, c.rowid, c.created_at, c.rowid FROM (SELECT DISTINCT routine_id FROM runs) d
        JOIN runs c ON c.rowid = (SELECT x.rowid FROM runs x WHERE x.routine_id = d.routine_id ORDER BY x.created_at DESC, x.rowid DESC LIMIT 1)`);
    before.close();
    const store = Store.open(file);
    const byRoutine = store.db.prepare(`SELECT name FROM pragma_index_list('runs') l WHERE (SELECT name FROM pragma_index_info(l.name) WHERE seqno = 0) = 'routine_id'`).pluck().all();
    expect(byRoutine).toEqual(['runs_routine_active']);
    expectSameAsSorted(store, 'upgraded');
    // New runs go on the chains the migration made.
    tolerant(() => insertMany(store, rnd, 60, t, 'new-'));
    expectSameAsSorted(store, 'upgraded, then run');
    // The retention removes the old runs and their links with them.
    for (let old = store.history.oldRuns(t - 1_000, 50); old.length; old = store.history.oldRuns(t - 1_000, 50)) store.tx(() => store.history.removeRuns(old));
    expectSameAsSorted(store, 'upgraded, old runs removed');
    const oldest = store.db.prepare(`SELECT MIN(rowid) FROM runs`).pluck().get() as number;
    expect(store.db.prepare(`SELECT COUNT(*) FROM run_links WHERE run_rowid < ?`).pluck().get(oldest)).toBe(0);
    store.close();
  });

  it('an insert writes the same pages with a routine’s long history as without: nothing keyed by routine deepens with it', () => {
    const pagesOfOneRunEach = (historyPerRoutine: number): number => {
      const store = Store.open(join(tempDir(), 'tend.db'));
      store.db.pragma('wal_autocheckpoint = 0');
      const routines = Array.from({ length: 100 }, (_, i) => `me@h:r${String(i).padStart(3, '0')}`);
      let t = 1_000_000;
      let n = 0;
      // Time-major, as a daemon writes them.
      for (let k = 0; k < historyPerRoutine; k++) store.tx(() => { for (const r of routines) store.runs.insert(run(`h${n++}`, r, (t += 10))); });
      store.db.pragma('wal_checkpoint(TRUNCATE)');
      store.tx(() => { for (const r of routines) store.runs.insert(run(`p${n++}`, r, (t += 10))); });
      const { log } = (store.db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[])[0]!;
      store.close();
      return log;
    };
    const empty = pagesOfOneRunEach(1);
    const history = pagesOfOneRunEach(300);
    // The trees that grow at their right edge (the runs, by id, by creation) are a level or two
    // deeper. With runs_routine_created, the 30,000 runs' index gave each routine leaves of its own: 100 more pages.
    expect(history).toBeLessThanOrEqual(empty + 10);
  });
});
