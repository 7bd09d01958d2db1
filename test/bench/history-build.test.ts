// The data dirs of `npm run bench history` (bench/history-build.ts), two hours of them: the run-now
// routine is this computer's (the daemon runs it itself; the scheduled ones are another computer's),
// and the runs the build copies in SQL still have each routine's newest run kept (routine_latest)
// as the store would have kept it, in a fresh build and in a copy of a cached one; so are the totals
// of finished runs (store/totals.ts) the routes and /metrics read, which the copies would skip.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { BY_HAND, buildHistoryCached } from '../../bench/history-build.js';
import { localComputer } from '../../main/engine/domain/schema.js';
import { Store } from '../../main/engine/store/store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Routines whose kept newest run differs from the seek's (by run time, then by creation). */
function stale(file: string): string[] {
  const store = Store.open(file);
  try {
    return (
      store.db
        .prepare(
          `SELECT d.id FROM routines d LEFT JOIN routine_latest l ON l.routine_id = d.id
          WHERE EXISTS (SELECT 1 FROM runs WHERE routine_id = d.id) AND (l.run_rowid IS NOT (SELECT x.rowid FROM runs x WHERE x.routine_id = d.id ORDER BY x.scheduled_at DESC, x.rowid DESC LIMIT 1)
            OR l.created_rowid IS NOT (SELECT x.rowid FROM runs x WHERE x.routine_id = d.id ORDER BY x.created_at DESC, x.rowid DESC LIMIT 1))`,
        )
        .pluck()
        .all() as string[]
    );
  } finally {
    store.close();
  }
}

/** Runs whose link in their routine's chain (store/chain.ts) is not the run created before them, in the chain's order. */
function misChained(file: string): unknown[] {
  const store = Store.open(file);
  try {
    return store.db
      .prepare(`SELECT rid FROM (SELECT rowid AS rid, prev_rowid, LAG(rowid) OVER (PARTITION BY routine_id ORDER BY created_at, rowid) AS want FROM runs) WHERE prev_rowid IS NOT want LIMIT 5`)
      .all();
  } finally {
    store.close();
  }
}

/** Routines and cycles whose kept newest run in the cycle differs from the seek's, or that have none. */
function staleCycles(file: string): unknown[] {
  const store = Store.open(file);
  try {
    return store.db
      .prepare(
        `SELECT g.routine_id, g.cycle FROM (SELECT DISTINCT routine_id, cycle FROM runs) g LEFT JOIN routine_cycles c USING (routine_id, cycle)
        WHERE c.run_rowid IS NOT (SELECT x.rowid FROM runs x WHERE x.routine_id = g.routine_id AND x.cycle = g.cycle ORDER BY x.scheduled_at DESC, x.created_at DESC, x.rowid DESC LIMIT 1)`,
      )
      .all();
  } finally {
    store.close();
  }
}

/** Where the kept totals of finished runs differ from a count of the runs (empty: none). */
function miscounted(file: string): Record<string, unknown[]> {
  const store = Store.open(file);
  const terminal = `status IN ('COMPLETED', 'ERROR', 'CANCELLED', 'EXITED', 'STOPPED')`;
  try {
    const differ = (sql: string) => store.db.prepare(sql).all();
    return {
      outcomes: differ(`SELECT * FROM (SELECT routine_id, kind, status, COUNT(*) AS n, MAX(CASE WHEN status = 'COMPLETED' THEN ended_at END) AS last FROM runs WHERE ${terminal} GROUP BY 1, 2, 3) c
        FULL JOIN run_totals t USING (routine_id, kind, status) WHERE c.n IS NOT t.n OR c.last IS NOT t.last_ended_at`),
      durations: differ(`SELECT * FROM (SELECT routine_id, COUNT(*) AS n, SUM(MAX(0, ended_at - started_at) / 1000.0) AS sum FROM runs
          WHERE ${terminal} AND kind = 'batch' AND started_at IS NOT NULL AND ended_at IS NOT NULL GROUP BY 1) c
        FULL JOIN run_duration_totals t USING (routine_id) WHERE c.n IS NOT t.n OR abs(c.sum - t.sum) > 1e-6`),
      quarters: differ(`SELECT * FROM (SELECT created_at / 900000 AS quarter, status, COUNT(*) AS n FROM runs WHERE ${terminal} GROUP BY 1, 2) c
        FULL JOIN run_quarter_totals t USING (quarter, status) WHERE c.n IS NOT t.n`),
    };
  } finally {
    store.close();
  }
}

function routineIds(file: string): string[] {
  const store = Store.open(file);
  try {
    return store.routines.allDefs().map((d) => d.id);
  } finally {
    store.close();
  }
}

it('builds two hours of history with the run-now routine on this computer and every routine newest run (and newest in each cycle) kept and the finished runs counted, fresh and copied from the cache', () => {
  expect(BY_HAND).toBe(`${localComputer()}:by-hand`);
  const root = mkdtempSync(join(tmpdir(), 'tend-bench-build-'));
  dirs.push(root);
  const now = Date.now();
  // Two hours: the second is the first copied in SQL.
  const days = 2 / 24;
  const first = buildHistoryCached(join(root, 'first'), now, days, join(root, 'cache'), 6);
  expect(first).toMatchObject({ runs: 36_000, cachedAgeMinutes: 0 });
  // As a cache built before the build counted its finished runs: its copy is counted.
  const slot = join(root, 'cache', readdirSync(join(root, 'cache'))[0]!);
  const { totalsRecounted, ...before } = JSON.parse(readFileSync(join(slot, 'built.json'), 'utf8')) as Record<string, unknown>;
  expect(totalsRecounted).toBe(true);
  writeFileSync(join(slot, 'built.json'), JSON.stringify(before));
  const cached = Store.open(join(slot, 'tend.db'));
  cached.db.exec(`DELETE FROM run_totals; DELETE FROM run_duration_totals; DELETE FROM run_quarter_totals`);
  cached.close();
  const copy = buildHistoryCached(join(root, 'copy'), now + 60_000, days, join(root, 'cache'), 6);
  expect(copy).toMatchObject({ runs: 36_000, cachedAgeMinutes: 1 });
  for (const dir of ['first', 'copy']) {
    const file = join(root, dir, 'tend.db');
    expect(routineIds(file)).toContain(BY_HAND);
    expect(routineIds(file).filter((id) => id.endsWith(':by-hand'))).toEqual([BY_HAND]);
    expect(stale(file)).toEqual([]);
    expect(staleCycles(file)).toEqual([]);
    expect(misChained(file)).toEqual([]);
    expect(miscounted(file)).toEqual({ outcomes: [], durations: [], quarters: [] });
  }
}, 120_000);
