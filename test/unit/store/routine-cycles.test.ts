// Each routine's newest run in each cycle is kept in routine_cycles as runs are inserted (store/cycles.ts,
// migration 12), so a dependency's run of the day is a row, not a seek into an index that every insert
// wrote deep in a B-tree. What latestInCycle answers must be what the seek answered: runs out of order,
// ties, rollbacks, an upgrade; and the retention drops a row once the run it names is gone.
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

function run(id: string, routineId: string, cycle: string, scheduledAt: number, createdAt: number): RunRow {
  return { id, routineId, kind: 'batch', cycle, scheduledAt, attempt: 1, status: 'COMPLETED', reason: null, exitCode: null, signal: null, backend: null, runDir: null, manual: false, notBefore: null, createdAt, startedAt: null, endedAt: null, heartbeatAt: null };
}

/** What the seek the kept rows replace answers. */
function sought(store: Store, routine: string, cycle: string): string | null {
  return (store.db.prepare(`SELECT id FROM runs WHERE routine_id = ? AND cycle = ? ORDER BY scheduled_at DESC, created_at DESC, rowid DESC LIMIT 1`).pluck().get(routine, cycle) as string | undefined) ?? null;
}

const CASES: [string, string][] = [A, B].flatMap((r) => ['2026-01-04', '2026-01-05', '2026-01-06'].map((c) => [r, c] as [string, string]));

function answers(store: Store): Record<string, string | null> {
  return Object.fromEntries(CASES.map(([r, c]) => [`${r} ${c}`, store.runs.latestInCycle(r, c)?.id ?? null]));
}

function seeks(store: Store): Record<string, string | null> {
  return Object.fromEntries(CASES.map(([r, c]) => [`${r} ${c}`, sought(store, r, c)]));
}

describe('routine_cycles', () => {
  it("keeps each routine's newest run in each cycle as runs are inserted: by run time, then creation, then insertion; a rollback leaves it as it was", () => {
    const store = Store.open(':memory:');
    store.runs.insert(run('a1', A, '2026-01-05', 100, 100));
    store.tx(() => {
      store.runs.insert(run('a2', A, '2026-01-05', 200, 200));
      // A catch-up of an earlier run time, created later: not the newest by run time.
      store.runs.insert(run('a0', A, '2026-01-05', 50, 300));
      // A retry: the same run time, created later.
      store.runs.insert(run('a2-retry', A, '2026-01-05', 200, 260));
      store.runs.insert(run('a-prev', A, '2026-01-04', 90, 400));
      store.runs.insert(run('b1', B, '2026-01-05', 100, 100));
      // Same run time and creation: the later insert.
      store.runs.insert(run('b1-again', B, '2026-01-05', 100, 100));
    });
    expect(() =>
      store.tx(() => {
        store.runs.insert(run('a9', A, '2026-01-05', 900, 900));
        throw new Error('rolled back');
      }),
    ).toThrow('rolled back');
    expect(answers(store)).toEqual(seeks(store));
    expect(answers(store)).toMatchObject({ [`${A} 2026-01-05`]: 'a2-retry', [`${A} 2026-01-04`]: 'a-prev', [`${B} 2026-01-05`]: 'b1-again', [`${A} 2026-01-06`]: null });
    // A row per routine and cycle: the read is one row, not the cycle's runs.
    expect(store.db.prepare(`SELECT COUNT(*) FROM routine_cycles`).pluck().get()).toBe(3);
    store.close();
  });

  it('migration 12 seeds them from the runs kept and drops runs_routine_cycle', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tend-cycles-'));
    dirs.push(dir);
    const file = join(dir, 'tend.db');
    const before = openDb(file, { migrations: MIGRATIONS.filter((m) => m.version < 12) });
    const insert = before.prepare(`INSERT INTO runs (id, routine_id, kind, cycle, scheduled_at, status, created_at) VALUES (?, ?, 'batch', ?, ?, 'COMPLETED', ?)`);
    for (const [id, routine, cycle, at, created] of [
      ['a1', A, '2026-01-05', 100, 100],
      ['a2', A, '2026-01-05', 200, 200],
      ['a0', A, '2026-01-05', 50, 300],
      ['a2-retry', A, '2026-01-05', 200, 260],
      ['a-prev', A, '2026-01-04', 90, 400],
      ['b1', B, '2026-01-06', 100, 100],
      ['b1-again', B, '2026-01-06', 100, 100],
    ] as const) {
      insert.run(id, routine, cycle, at, created);
    }
    before.close();
    const store = Store.open(file);
    expect(store.db.prepare(`SELECT name FROM sqlite_master WHERE name = 'runs_routine_cycle'`).pluck().all()).toEqual([]);
    expect(answers(store)).toEqual({ ...seeks(store), [`${A} 2026-01-05`]: 'a2-retry', [`${B} 2026-01-06`]: 'b1-again' });
    store.close();
  });

  it('the retention drops the row of a cycle whose run it removed, and keeps the rest', () => {
    const store = Store.open(':memory:');
    const at = (d: string) => Date.parse(`${d}T12:00:00Z`);
    store.runs.insert(run('old1', A, '2026-01-01', at('2026-01-01'), at('2026-01-01')));
    store.runs.insert(run('old2', A, '2026-01-02', at('2026-01-02'), at('2026-01-02')));
    store.runs.insert(run('new', A, '2026-01-10', at('2026-01-10'), at('2026-01-10')));
    const cutoff = at('2026-01-05');
    const old = store.history.oldRuns(cutoff, 100);
    expect(old.map((r) => r.id)).toEqual(['old1', 'old2']);
    store.tx(() => store.history.removeRuns(old.slice(0, 1)));
    expect(store.tx(() => store.history.pruneCycles(cutoff))).toBe(1);
    expect(store.db.prepare(`SELECT cycle FROM routine_cycles ORDER BY cycle`).pluck().all()).toEqual(['2026-01-02', '2026-01-10']);
    expect(store.runs.latestInCycle(A, '2026-01-02')?.id).toBe('old2');
    expect(store.runs.latestInCycle(A, '2026-01-01')).toBeNull();
    store.close();
  });
});
