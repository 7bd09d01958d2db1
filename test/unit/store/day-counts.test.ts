// Today's runs by status (daemon status, the counts the daemon saves in its state file) come from
// the quarter-hour totals of finished runs and the index of unfinished ones, never from the day's
// runs, and say exactly what counting the runs says: runs written finished, runs that finish later,
// runs still open, runs of the day before; from a time the totals do not hold, the runs are counted.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { RunRow } from '../../../main/engine/domain/types.js';
import { openDb } from '../../../main/engine/store/db.js';
import { MIGRATIONS } from '../../../main/engine/store/migrations.js';
import { Store } from '../../../main/engine/store/store.js';
import { ManualClock } from '../../../main/engine/clock.js';
import { Retention } from '../../../main/engine/retention.js';

const QUARTER = 900_000;
const FROM = Date.UTC(2026, 0, 5); // a midnight
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function run(id: string, createdAt: number, status: RunRow['status']): RunRow {
  return { id, routineId: 'me@h:r', kind: 'batch', cycle: '2026-01-05', scheduledAt: createdAt, attempt: 1, status, reason: null, exitCode: null, signal: null, backend: null, runDir: null, manual: false, notBefore: null, createdAt, startedAt: null, endedAt: null, heartbeatAt: null };
}

/** What counting the runs says. */
function counted(store: Store, from: number): Record<string, number> {
  const rows = store.db.prepare(`SELECT status, COUNT(*) AS n FROM runs WHERE created_at >= ? GROUP BY status`).all(from) as { status: string; n: number }[];
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

function fill(store: Store): void {
  store.tx(() => {
    store.runs.insert(run('yesterday-done', FROM - 1, 'COMPLETED'));
    store.runs.insert(run('yesterday-open', FROM - 5 * QUARTER, 'RUNNING'));
    store.runs.insert(run('written-failed', FROM, 'ERROR'));
    for (let i = 0; i < 5; i++) store.runs.insert(run(`t${i}`, FROM + i * QUARTER + 7, 'PENDING'));
    store.runs.insert(run('open', FROM + 3 * QUARTER, 'RUNNING'));
  });
  store.runs.cas('t0', ['PENDING'], 'STARTING');
  store.runs.cas('t0', ['STARTING'], 'COMPLETED', { endedAt: FROM + 10 });
  store.tx(() => {
    store.runs.cas('t1', ['PENDING'], 'COMPLETED');
    store.runs.cas('t2', ['PENDING'], 'CANCELLED');
    store.runs.cas('t3', ['PENDING'], 'COMPLETED');
  });
  store.runs.cas('t3', ['PENDING'], 'ERROR'); // already moved: not counted twice
}

it('counts the day from the totals and the open runs, as counting the runs would', () => {
  const heard: string[] = [];
  const store = Store.open(':memory:', { trace: (sql) => heard.push(sql) });
  fill(store);
  heard.length = 0;
  const today = store.runs.countByStatus(FROM);
  const read = heard.filter((s) => /\bFROM runs\b/.test(s));
  expect(today).toEqual({ CANCELLED: 1, COMPLETED: 3, ERROR: 1, PENDING: 1, RUNNING: 1 });
  expect(Object.keys(today)).toEqual(Object.keys(counted(store, FROM))); // in status order too
  expect(today).toEqual(counted(store, FROM));
  // Only the totals and the index of unfinished runs were read.
  expect(read).toHaveLength(1);
  expect(read[0]).toContain('INDEXED BY runs_routine_active');
  // A quarter later, and a time off the quarter (the runs counted): the same as counting.
  expect(store.runs.countByStatus(FROM + QUARTER)).toEqual(counted(store, FROM + QUARTER));
  expect(store.runs.countByStatus(FROM + 8)).toEqual(counted(store, FROM + 8));
  expect(store.runs.countByStatus(FROM - 6 * QUARTER)).toEqual(counted(store, FROM - 6 * QUARTER));
  store.close();
});

it('an upgraded database holds the finished runs of the last two days; before them, the runs are counted', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tend-day-counts-'));
  dirs.push(dir);
  const file = join(dir, 'tend.db');
  const now = Date.now();
  const midnight = Math.floor(now / 86_400_000) * 86_400_000;
  // Written as the Tend before the totals wrote them: rows alone.
  const before = openDb(file, { migrations: MIGRATIONS.filter((m) => m.version < 7) });
  const insert = before.prepare(`INSERT INTO runs (id, routine_id, kind, cycle, scheduled_at, status, created_at) VALUES (?, 'me@h:r', 'batch', '2026-01-05', ?, ?, ?)`);
  for (const [id, at, status] of [['old', midnight - 3 * 86_400_000, 'COMPLETED'], ['today-done', midnight + 1, 'COMPLETED'], ['today-failed', midnight + 2, 'ERROR'], ['today-open', midnight + 3, 'PENDING']] as const) {
    insert.run(id, at, status, at);
  }
  before.close();
  const store = Store.open(file);
  store.runs.cas('today-open', ['PENDING'], 'COMPLETED');
  expect(store.runs.countByStatus(midnight)).toEqual({ COMPLETED: 2, ERROR: 1 });
  expect(store.runs.countByStatus(midnight)).toEqual(counted(store, midnight));
  expect(store.runs.countByStatus(midnight - 4 * 86_400_000)).toEqual(counted(store, midnight - 4 * 86_400_000));
  store.close();
});

it('the retention removes the quarters before its cutoff; a day before it is then counted from the runs', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tend-day-counts-'));
  dirs.push(dir);
  const store = Store.open(join(dir, 'tend.db'));
  const DAY = 86_400_000;
  store.tx(() => {
    for (let d = 0; d < 5; d++) store.runs.insert(run(`d${d}`, FROM + d * DAY + 60_000, 'COMPLETED'));
  });
  const quarters = () => store.db.prepare(`SELECT COUNT(*) FROM run_quarter_totals`).pluck().get();
  expect(quarters()).toBe(5);
  // Keeps 2 days at day 4 (noon): quarters before day 2's noon go; the runs before it go too, the newest of the routine stays.
  await new Retention(store, dir, new ManualClock(FROM + 4 * DAY + DAY / 2), { keepDays: 2 }).sweep();
  expect(quarters()).toBe(2);
  expect(store.db.prepare(`SELECT id FROM runs ORDER BY id`).pluck().all()).toEqual(['d3', 'd4']);
  for (const from of [FROM, FROM + 3 * DAY, FROM + 4 * DAY]) expect(store.runs.countByStatus(from)).toEqual(counted(store, from));
  store.runs.insert(run('old-again', FROM + DAY, 'COMPLETED')); // a run of a day before the cutoff, written late
  expect(store.runs.countByStatus(FROM)).toEqual(counted(store, FROM));
  store.close();
});

it('the runs a transaction finishes are added to the quarter totals a row per quarter and outcome, not a row per run', () => {
  const heard: string[] = [];
  const store = Store.open(':memory:', { trace: (sql) => heard.push(sql) });
  store.tx(() => {
    for (let i = 0; i < 6; i++) store.runs.insert(run(`q${i}`, FROM + (i < 4 ? 7 : QUARTER + 7), 'PENDING'));
  });
  heard.length = 0;
  store.tx(() => {
    for (let i = 0; i < 6; i++) store.runs.cas(`q${i}`, ['PENDING'], i === 5 ? 'ERROR' : 'COMPLETED');
  });
  const quarters = heard.filter((s) => s.startsWith('INSERT INTO run_quarter_totals'));
  // (q0, COMPLETED, 4), (q1, COMPLETED, 1), (q1, ERROR, 1): three rows (in statements of 2 and 1 rows), not six.
  expect(quarters.flatMap((s) => s.match(/\(\d+(\.0)?, '\w+', \d+(\.0)?\)/g) ?? [])).toHaveLength(3);
  expect(store.db.prepare(`SELECT quarter - ? AS q, status, n FROM run_quarter_totals ORDER BY quarter, status`).all(FROM / QUARTER)).toEqual([
    { q: 0, status: 'COMPLETED', n: 4 },
    { q: 1, status: 'COMPLETED', n: 1 },
    { q: 1, status: 'ERROR', n: 1 },
  ]);
  expect(store.runs.countByStatus(FROM)).toEqual(counted(store, FROM));
  store.close();
});
