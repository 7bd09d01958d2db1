// No statement Tend prepares scans history. Every SQL text prepared on the store's connection while
// the engine runs its passes, the API's methods, the metrics, the MCP read tools, the doctor, the
// status and the retention is recorded, then `EXPLAIN QUERY PLAN` must not show a full scan of
// runs, events, jobs or commands (those grow with history). A scan of a partial index that holds
// only unfinished work is bounded by what is in flight, not by history: allowed, by name.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../main/engine/clock.js';
import { doctor } from '../../../main/engine/daemon/doctor.js';
import { daemonStatus } from '../../../main/engine/daemon/status.js';
import type { Engine } from '../../../main/engine/engine.js';
import { buildEngine } from '../../../main/engine/host/build-engine.js';
import { makeMethods } from '../../../main/engine/api/methods.js';
import { failures, jobs as mcpJobs, routineDetail, routines as mcpRoutines, runsOfDay, workers as mcpWorkers } from '../../../main/engine/mcp/read.js';
import { whatIsWaiting } from '../../../main/engine/mcp/waiting.js';
import { collectMetrics } from '../../../main/engine/metrics/collect.js';
import { DEFAULT_SETTINGS } from '../../../main/engine/settings.js';
import { openDb } from '../../../main/engine/store/db.js';
import { Store } from '../../../main/engine/store/store.js';
import { COMPUTER, MIN, T0 } from '../../helpers/engine-fixture.js';
import { TestBackend } from '../../helpers/test-backend.js';

const GUARDED = ['runs', 'events', 'jobs', 'commands'];

/** Partial indexes over unfinished work only: scanning one costs what is in flight. */
const BOUNDED_INDEXES: Record<string, string> = {
  commands_queue: 'only commands queued and not fetched yet (they expire after 60 s)',
  runs_routine_active: 'only runs not finished (PENDING, DELAYED, STARTING, RUNNING), by routine',
};

/** Indexes read in their order and only up to a LIMIT (newest first): allowed in a statement with a LIMIT and no sort. */
const ORDERED_INDEXES: Record<string, string> = {
  runs_failed: 'failed runs, newest first: the status page and the MCP read the latest few',
  jobs_failed: 'failed jobs, newest first: the MCP reads the latest few',
};

/** Statements whose plan says SCAN but that read a bounded number of rows, each with why (reviewed). */
const ALLOWED: { sql: RegExp; why: string }[] = [
  { sql: /^SELECT \* FROM events ORDER BY id DESC LIMIT \?$/, why: 'the newest N events: walks the rowid from the end and stops at the limit' },
  { sql: /^SELECT \* FROM commands ORDER BY id DESC LIMIT \?$/, why: 'the newest N commands: walks the rowid from the end and stops at the limit' },
  { sql: /FROM jobs j ORDER BY j\.id DESC LIMIT \?$/, why: 'the newest N jobs (the Batch jobs page): walks the rowid from the end and stops at the limit' },
];

const seen = new Set<string>();
let record = true;
let dir: string;
let engine: Engine;
let store: Store;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tend-plans-'));
  const db = openDb(join(dir, 'tend.db'));
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    if (record) seen.add(sql);
    return prepare(sql);
  }) as typeof db.prepare;
  store = new Store(db);
  const clock = new ManualClock(T0);
  const backend = new TestBackend('local', { clock });
  engine = buildEngine({ dataDir: dir, clock, store, replace: new Map([['local', backend]]), options: { computer: COMPUTER, launchInBackground: false }, retention: { keepDays: 1 } });
  const m = makeMethods(engine);
  const call = async (fn: () => unknown) => {
    try {
      await fn();
    } catch {
      // An action refused in this state still prepared its statements.
    }
  };
  const id = (path: string) => `${COMPUTER}:${path}`;
  await m['routines.create']({ id: id('batch/a'), command: 'true', cron: '* * * * *', tz: 'UTC' });
  await m['routines.create']({ id: id('batch/b'), command: 'true', cron: '*/5 * * * *', tz: 'UTC', after: [id('batch/a')] });
  await m['routines.create']({ id: id('rt/feed'), command: 'true', realtime: true, heartbeat: '30s' });
  await m['routines.create']({ id: id('loop'), command: 'true', every: '15m' });
  await m['routines.create']({ id: 'bob@gpu:remote', command: 'true', cron: '* * * * *', tz: 'UTC' });
  const first = (await m['jobs.post']({ name: 'one', command: 'true' })) as { id: number };
  await m['jobs.post']({ name: 'two', command: 'true', after: [first.id] });
  for (let i = 0; i < 6; i++) {
    await engine.scheduler.pass();
    for (const j of backend.jobs.values()) if (j.state === 'running') backend.finish(j.id, { exitCode: i % 3 === 0 ? 1 : 0 });
    clock.advance(MIN);
  }
  await engine.scheduler.pass();
  for (const [name, fn] of Object.entries(m)) {
    const args: Record<string, unknown> = {
      'routines.show': { id: id('batch/a') },
      'routines.edit': { id: id('loop'), changes: { every: '20m' } },
      'routines.remove': { id: id('loop') },
      'runs.show': { id: 'nope' },
      'runs.log': { id: 'nope' },
      'jobs.show': { id: first.id },
      'jobs.cancel': { id: first.id },
      'timing.preview': { timing: { cron: '0 7 * * *' } },
      'schedules.setMode': { name: 'default', mode: 'active' },
      'workers.forget': { computer: 'bob@gpu', force: true },
      'events.recent': { after: 0 },
    };
    if (name === 'routines.create' || name === 'jobs.post') continue;
    for (const a of [args[name] ?? { id: id('batch/a') }, {}]) await call(() => (fn as (x: unknown) => unknown)(a));
  }
  await call(() => m['events.recent']({}));
  await call(() => m['jobs.list']({ status: 'ERROR' }));
  await call(() => m['runs.list']({ day: '2026-01-05' }));
  const now = clock.now();
  collectMetrics(store, now, null, DEFAULT_SETTINGS.workerOfflineMs);
  daemonStatus(dir, store, now);
  doctor(dir, store, now, null);
  mcpRoutines(store, now, { limit: 10 });
  runsOfDay(store, now, { limit: 10 });
  await failures(store, engine.runFiles, now, { sinceHours: 24, limit: 10, stderrBytes: 100 });
  routineDetail(store, id('batch/a'), now, { history: 10, next: 3 });
  mcpWorkers(store, now, DEFAULT_SETTINGS.workerOfflineMs);
  mcpJobs(store, { limit: 10 });
  whatIsWaiting(store, dir, now);
  // What `tend logs` reads of an external run.
  store.events.externalLog(id('batch/a'), 'nope', 10);
  store.pool.enqueue('bob@gpu', 'start', { runId: 'x' }, now, DEFAULT_SETTINGS.commandTtlMs);
  store.pool.fetch('bob@gpu', now);
  clock.advance(3 * 24 * 60 * MIN);
  await engine.retention.sweep();
  await engine.scheduler.pass();
});

afterAll(async () => {
  await engine?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Names a statement uses for the guarded tables: the table itself and any alias. */
function namesFor(sql: string): Map<string, string> {
  const names = new Map(GUARDED.map((t) => [t, t]));
  for (const m of sql.matchAll(/\b(?:FROM|JOIN)\s+(runs|events|jobs|commands)\s+(?:AS\s+)?([a-z]\w*)/gi)) {
    if (!/^(WHERE|JOIN|LEFT|INNER|ON|ORDER|GROUP|LIMIT|SET|USING)$/i.test(m[2]!)) names.set(m[2]!, m[1]!);
  }
  return names;
}

function plan(sql: string): string[] {
  const named = Object.fromEntries([...sql.matchAll(/@(\w+)/g)].map((m) => [m[1]!, null]));
  const positional = (sql.replace(/'[^']*'/g, '').match(/\?/g) ?? []).length;
  const stmt = store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
  const args: unknown[] = Array.from({ length: positional }, () => null);
  const rows = (Object.keys(named).length ? stmt.all(named, ...args) : stmt.all(...args)) as { detail: string }[];
  return rows.map((r) => r.detail);
}

describe('query plans', () => {
  it('recorded the statements of the pass, the API, metrics, MCP, doctor, status and retention', () => {
    const all = [...seen].join('\n');
    for (const fragment of ["type = 'external:log'", 'INDEXED BY runs_routine_active', 'UPDATE runs SET', 'FROM run_totals', 'DELETE FROM runs', 'SELECT status, COUNT(*) AS n FROM runs', 'FROM commands', 'UNION ALL', 'FROM jobs', 'FROM routine_latest l JOIN runs y', 'INSERT INTO routine_latest']) {
      expect(all).toContain(fragment);
    }
    // EXPLAIN's own statements are not recorded.
    record = false;
    if (process.env.TEND_SHOW_PLANS) for (const sql of seen) if (/FROM runs/.test(sql)) console.log(`${sql.replace(/\s+/g, ' ')}\n  ${plan(sql).join('\n  ')}`);
    expect(seen.size).toBeGreaterThan(100);
  });

  it('no statement scans runs, events, jobs or commands (a bounded partial index aside)', () => {
    record = false;
    const offenders: string[] = [];
    for (const sql of seen) {
      if (/^\s*(PRAGMA|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/i.test(sql)) continue;
      if (ALLOWED.some((a) => a.sql.test(sql))) continue;
      const names = namesFor(sql);
      const details = plan(sql);
      const where = `\n    in: ${sql.replace(/\s+/g, ' ').trim()}`;
      for (const detail of details) {
        const scan = /^SCAN (\w+)(?: USING (?:COVERING )?INDEX (\w+))?/.exec(detail);
        const ordered = scan?.[2] && ORDERED_INDEXES[scan[2]] && /\bLIMIT\b/i.test(sql) && !details.some((d) => d.includes('TEMP B-TREE'));
        if (scan && names.has(scan[1]!) && !(scan[2] && BOUNDED_INDEXES[scan[2]]) && !ordered) offenders.push(`${detail}${where}`);
        // A range with only an upper bound (before a time) reads all history before it, unless it stops at a LIMIT.
        const before = /^SEARCH (\w+) USING (?:COVERING )?INDEX (\w+) \((\w+)<\?\)$/.exec(detail);
        if (before && names.has(before[1]!) && !BOUNDED_INDEXES[before[2]!] && (!/\bLIMIT\b/i.test(sql) || details.some((d) => d.includes('TEMP B-TREE')))) {
          offenders.push(`${detail} (all history before a time)${where}`);
        }
        // Seeking a routine and then sorting or filtering all its rows reads its whole history.
        const routine = /^SEARCH (\w+) USING (?:COVERING )?INDEX (\w+) \(routine_id=\?\)$/.exec(detail);
        if (routine && names.has(routine[1]!) && !BOUNDED_INDEXES[routine[2]!] && (!/\bLIMIT\b/i.test(sql) || details.some((d) => d.includes('TEMP B-TREE')))) {
          offenders.push(`${detail} (the routine's whole history)${where}`);
        }
      }
    }
    expect(offenders, offenders.join('\n')).toEqual([]);
  });
});
