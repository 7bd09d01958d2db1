// A data dir with a month of history, built through the store's own code in big transactions:
// 100 every-minute and 1,000 every-5-minute routines, each slot a finished run with the events a
// real run leaves (submitted, completed). Time-major, as a daemon writes it.
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { localComputer } from '../main/engine/domain/schema.js';
import { importSchedule } from '../main/engine/ops/schedules.js';
import { Store } from '../main/engine/store/store.js';
import { QUARTER_MS, RUN_DURATION_BOUNDS, RUN_TERMINAL } from '../main/engine/store/totals.js';

export const MINUTE = 60_000;
export const DAY = 24 * 60 * MINUTE;

/**
 * Run by hand only (the run-now measurement): never busy with a scheduled run. This computer's, so
 * the daemon runs it itself; the scheduled routines are bench@host's, a worker that never connects,
 * so their runs wait (PENDING, then DELAYED) in every data dir alike and the daemons launch nothing else.
 */
export const BY_HAND = `${localComputer()}:by-hand`;

export function benchRoutines(): { id: string; command: string; cron?: string; at?: string; tz: string }[] {
  return [
    { id: BY_HAND, command: '/bin/true', at: '2099-01-01T00:00', tz: 'UTC' },
    ...Array.from({ length: 100 }, (_, i) => ({ id: `bench@host:minute/${i}`, command: '/bin/true', cron: '* * * * *', tz: 'UTC' })),
    ...Array.from({ length: 1000 }, (_, i) => ({ id: `bench@host:five/${i}`, command: '/bin/true', cron: '*/5 * * * *', tz: 'UTC' })),
  ];
}

/** The routines alone (the empty data dir the history one is measured against). */
export function buildEmpty(dir: string, now: number): void {
  mkdirSync(dir, { recursive: true });
  const store = Store.open(join(dir, 'tend.db'));
  importSchedule(store, stringify({ schedule: 'bench', routines: benchRoutines() }), now);
  store.close();
}

/**
 * The routines and `days` of finished runs before `now`; returns the runs written. The first hour
 * goes through the store's own code (insert, the transition to COMPLETED, the run's events); every
 * later hour is that hour copied in SQL with its times shifted (same rows, same triggers, same
 * indexes), which is what makes a month buildable in minutes.
 */
export function buildHistory(dir: string, now: number, days: number, progress: (s: string) => void = () => {}): number {
  buildEmpty(dir, now);
  const store = Store.open(join(dir, 'tend.db'));
  const routines = benchRoutines();
  const HOUR = 60 * MINUTE;
  const hours = Math.max(1, Math.floor((days * DAY) / HOUR));
  const start = Math.floor((now - hours * HOUR) / HOUR) * HOUR;
  let seq = 0;
  const t0 = performance.now();
  store.tx(() => {
    for (let slot = start; slot < start + HOUR; slot += MINUTE) {
      const minute = new Date(slot).getUTCMinutes();
      const cycle = new Date(slot).toISOString().slice(0, 10);
      for (const r of routines) {
        if (!r.cron || (r.cron !== '* * * * *' && minute % 5 !== 0)) continue;
        const id = `h${(seq++).toString(36)}`;
        const started = slot + 50;
        const ended = started + 200 + (seq % 700);
        store.runs.insert({
          id, routineId: r.id, kind: 'batch', cycle, scheduledAt: slot, attempt: 1, status: 'PENDING', reason: null, exitCode: null, signal: null,
          backend: 'local', runDir: null, manual: false, notBefore: null, createdAt: slot, startedAt: null, endedAt: null, heartbeatAt: null,
        });
        store.runs.cas(id, ['PENDING'], 'COMPLETED', { exitCode: 0, startedAt: started, endedAt: ended, runDir: join(dir, 'runs', cycle, id) });
        store.events.append({ type: 'run:submitted', routineId: r.id, runId: id, message: 'submitted to local (attempt 1)' }, started);
        store.events.append({ type: 'run:completed', routineId: r.id, runId: id, message: 'completed', data: { exitCode: 0, signal: null } }, ended);
      }
    }
  });
  const perHour = seq;
  // Each copy takes the rowid of its original plus h hours' runs (checked below), so its link in its
  // routine's chain (store/chain.ts) is its original's shifted as much, or, for the routine's first
  // run of the hour, the routine's last run of the hour before.
  store.db.exec(`CREATE TEMP TABLE last_of_hour (routine_id TEXT PRIMARY KEY, rid INTEGER NOT NULL);
    INSERT INTO last_of_hour SELECT routine_id, MAX(rowid) FROM runs GROUP BY routine_id`);
  const copyRuns = store.db.prepare(`INSERT INTO runs (id, routine_id, kind, cycle, scheduled_at, attempt, status, exit_code, backend, run_dir, manual, created_at, started_at, ended_at, prev_rowid)
    SELECT id || '-' || @h, routine_id, kind, strftime('%Y-%m-%d', (scheduled_at + @off) / 1000, 'unixepoch'), scheduled_at + @off, attempt, 'PENDING', exit_code, backend,
      run_dir || '-' || @h, manual, created_at + @off, started_at + @off, ended_at + @off,
      COALESCE(prev_rowid + @h * @n, (SELECT l.rid FROM temp.last_of_hour l WHERE l.routine_id = runs.routine_id) + (@h - 1) * @n)
    FROM runs WHERE rowid <= @n ORDER BY rowid`);
  const finish = store.db.prepare(`UPDATE runs SET status = 'COMPLETED' WHERE rowid > @from`);
  const copyEvents = store.db.prepare(`INSERT INTO events (at, type, level, routine_id, run_id, message, data)
    SELECT at + @off, type, level, routine_id, run_id || '-' || @h, message, data FROM events WHERE run_id IS NOT NULL AND id <= @last ORDER BY id`);
  const lastEvent = Number(store.db.prepare(`SELECT MAX(id) FROM events`).pluck().get());
  for (let h = 1; h < hours; h++) {
    store.tx(() => {
      const from = Number(store.db.prepare(`SELECT MAX(rowid) FROM runs`).pluck().get());
      if (from !== h * perHour) throw new Error(`history build: runs not numbered by the hour (${from} rows before hour ${h}, not ${h * perHour})`);
      copyRuns.run({ h, off: h * HOUR, n: perHour });
      // Inserted PENDING, then finished, as a daemon writes them; counted at the end (recountTotals).
      finish.run({ from });
      copyEvents.run({ h, off: h * HOUR, last: lastEvent });
    });
    if (h % 24 === 0) progress(`${h * perHour} runs (${Math.round((performance.now() - t0) / 1000)} s)`);
  }
  // The copies above bypass the store's upkeep of each routine's newest run (its newest by creation
  // here, its last of the last hour: no catch-ups, no retries) and of its newest run in each cycle (the hour's copy of each).
  store.db.exec(`DROP TABLE temp.last_of_hour`);
  store.tx(() =>
    store.db.exec(`DELETE FROM routine_latest; INSERT INTO routine_latest (routine_id, scheduled_at, run_rowid, created_at, created_rowid)
      SELECT d.id, c.scheduled_at, c.rowid, c.created_at, c.rowid FROM routines d
        JOIN (SELECT routine_id, MAX(rowid) AS rid FROM runs WHERE rowid > ${(hours - 1) * perHour} GROUP BY routine_id) n ON n.routine_id = d.id
        JOIN runs c ON c.rowid = n.rid;
      DELETE FROM routine_cycles; INSERT INTO routine_cycles (cycle, routine_id, scheduled_at, created_at, run_rowid)
        SELECT cycle, routine_id, MAX(scheduled_at), created_at, rowid FROM runs GROUP BY cycle, routine_id`),
  );
  // And its counting of finished runs (store/totals.ts): only the first hour was counted as it finished.
  recountTotals(store);
  store.db.pragma('wal_checkpoint(TRUNCATE)');
  store.close();
  return hours * perHour;
}

const TERMINAL = `(${[...RUN_TERMINAL].map((t) => `'${t}'`).join(', ')})`;
const BUCKETS = RUN_DURATION_BOUNDS.map((_, i) => `b${i}`).concat(`b${RUN_DURATION_BOUNDS.length}`);
const bucketOf = (d: string) => `CASE ${RUN_DURATION_BOUNDS.map((b, i) => `WHEN ${d} <= ${b} THEN ${i}`).join(' ')} ELSE ${RUN_DURATION_BOUNDS.length} END`;

/**
 * The totals of finished runs (run_totals, run_duration_totals, run_quarter_totals) counted again
 * from the runs, as store/totals.ts counts each as it finishes: what the routes and /metrics read.
 */
export function recountTotals(store: Store): void {
  store.tx(() =>
    store.db.exec(`DELETE FROM run_totals; DELETE FROM run_duration_totals; DELETE FROM run_quarter_totals;
      INSERT INTO run_totals (routine_id, kind, status, n, last_ended_at)
        SELECT routine_id, kind, status, COUNT(*), MAX(CASE WHEN status = 'COMPLETED' THEN ended_at END) FROM runs
        WHERE status IN ${TERMINAL} GROUP BY routine_id, kind, status;
      INSERT INTO run_duration_totals (routine_id, ${BUCKETS.join(', ')}, sum, n)
        SELECT routine_id, ${BUCKETS.map((_, i) => `SUM(bk = ${i})`).join(', ')}, SUM(d), COUNT(*) FROM (
          SELECT routine_id, d, ${bucketOf('d')} AS bk FROM (
            SELECT routine_id, MAX(0, ended_at - started_at) / 1000.0 AS d FROM runs
            WHERE status IN ${TERMINAL} AND kind = 'batch' AND started_at IS NOT NULL AND ended_at IS NOT NULL))
        GROUP BY routine_id;
      INSERT INTO run_quarter_totals (quarter, status, n)
        SELECT created_at / ${QUARTER_MS}, status, COUNT(*) FROM runs WHERE status IN ${TERMINAL} GROUP BY created_at / ${QUARTER_MS}, status;`),
  );
}

/** Bumped whenever what buildHistory writes changes: a cached build of another version is rebuilt. */
const BUILD_VERSION = 2;

export interface Built {
  runs: number;
  buildSeconds: number;
  /** How long ago the history was built (0: built in this run); its newest runs are this old. */
  cachedAgeMinutes: number;
  /** The `now` it was built at: its runs end within the hour before. */
  endsAt: number;
}

/**
 * buildHistory, or a copy of a recent one kept in `cacheDir` (a month takes a quarter of an hour to
 * build on a loaded machine; a copy, seconds). The copy gets the triggers of a fresh import at `now`,
 * so its first pass has nothing to catch up; its history simply ends `cachedAgeMinutes` ago.
 */
export function buildHistoryCached(dir: string, now: number, days: number, cacheDir: string | null, maxAgeHours: number, progress: (s: string) => void = () => {}): Built {
  const build = (into: string): Built => {
    const t0 = performance.now();
    const runs = buildHistory(into, now, days, progress);
    return { runs, buildSeconds: Math.round((performance.now() - t0) / 100) / 10, cachedAgeMinutes: 0, endsAt: now };
  };
  if (!cacheDir) return build(dir);
  const slot = join(cacheDir, `history-${days}d-v${BUILD_VERSION}`);
  const metaFile = join(slot, 'built.json');
  let meta: (Built & { builtAt: number; totalsRecounted?: boolean }) | null = null;
  try {
    meta = JSON.parse(readFileSync(metaFile, 'utf8')) as Built & { builtAt: number; totalsRecounted?: boolean };
  } catch {
    // Nothing cached yet.
  }
  if (!meta || !existsSync(join(slot, 'tend.db')) || now - meta.builtAt > maxAgeHours * 3_600_000 || now < meta.builtAt) {
    rmSync(slot, { recursive: true, force: true });
    const built = build(slot);
    meta = { ...built, builtAt: now, totalsRecounted: true };
    writeFileSync(metaFile, `${JSON.stringify(meta)}\n`);
  }
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(slot, 'tend.db'), join(dir, 'tend.db'));
  if (!meta.totalsRecounted) {
    // Built before the build counted its finished runs: the copy is counted (seconds, not a
    // rebuild; the cache itself is left as it is, another run may be copying it).
    const store = Store.open(join(dir, 'tend.db'));
    try {
      recountTotals(store);
      store.db.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      store.close();
    }
  }
  freshTriggers(dir, now);
  return { runs: meta.runs, buildSeconds: meta.buildSeconds, cachedAgeMinutes: Math.round((now - meta.builtAt) / 60_000), endsAt: meta.builtAt };
}

/**
 * The same routines with only the runs of the day `endsAt` falls in, up to it (the history's last
 * day, nothing before): what the routes that show a day (runs, counts, totals) are compared with.
 */
export function buildToday(dir: string, endsAt: number, now: number): number {
  const midnight = new Date(endsAt);
  midnight.setHours(0, 0, 0, 0);
  const runs = buildHistory(dir, endsAt, (endsAt - midnight.getTime()) / DAY);
  if (endsAt !== now) freshTriggers(dir, now);
  return runs;
}

/**
 * The routines and the triggers of a fresh import at `now`: a copy built earlier has nothing to catch
 * up at start, and has this computer's run-now routine (a copy built elsewhere, or before it was
 * this computer's, has another's).
 */
function freshTriggers(dir: string, now: number): void {
  const fresh = join(dir, 'fresh-routines');
  buildEmpty(fresh, now);
  const store = Store.open(join(dir, 'tend.db'));
  try {
    importSchedule(store, stringify({ schedule: 'bench', routines: benchRoutines() }), now);
    store.db.prepare(`ATTACH DATABASE ? AS fresh`).run(join(fresh, 'tend.db'));
    store.tx(() => {
      store.db.exec(`DELETE FROM triggers; INSERT INTO triggers SELECT * FROM fresh.triggers`);
    });
    store.db.exec(`DETACH DATABASE fresh`);
    store.db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    store.close();
    rmSync(fresh, { recursive: true, force: true });
  }
}
