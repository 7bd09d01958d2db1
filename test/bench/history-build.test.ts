// The data dirs of `npm run bench history` (bench/history-build.ts), two hours of them: the run-now
// routine is this computer's (the daemon runs it itself; the scheduled ones are another computer's),
// and the runs the build copies in SQL still have each routine's newest run kept (routine_latest)
// as the store would have kept it, in a fresh build and in a copy of a cached one.
import { mkdtempSync, rmSync } from 'node:fs';
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

function routineIds(file: string): string[] {
  const store = Store.open(file);
  try {
    return store.routines.allDefs().map((d) => d.id);
  } finally {
    store.close();
  }
}

it('builds two hours of history with the run-now routine on this computer and every routine newest run kept, fresh and copied from the cache', () => {
  expect(BY_HAND).toBe(`${localComputer()}:by-hand`);
  const root = mkdtempSync(join(tmpdir(), 'tend-bench-build-'));
  dirs.push(root);
  const now = Date.now();
  // Two hours: the second is the first copied in SQL.
  const days = 2 / 24;
  const first = buildHistoryCached(join(root, 'first'), now, days, join(root, 'cache'), 6);
  expect(first).toMatchObject({ runs: 36_000, cachedAgeMinutes: 0 });
  const copy = buildHistoryCached(join(root, 'copy'), now + 60_000, days, join(root, 'cache'), 6);
  expect(copy).toMatchObject({ runs: 36_000, cachedAgeMinutes: 1 });
  for (const dir of ['first', 'copy']) {
    const file = join(root, dir, 'tend.db');
    expect(routineIds(file)).toContain(BY_HAND);
    expect(routineIds(file).filter((id) => id.endsWith(':by-hand'))).toEqual([BY_HAND]);
    expect(stale(file)).toEqual([]);
  }
}, 120_000);
