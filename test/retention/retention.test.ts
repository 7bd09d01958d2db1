// History retention over a real SQLite file and real job directories: what is old and finished
// goes (rows and directories), what is recent, in flight, the latest of its routine, or still a
// dependency stays; the metrics count the same before and after.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../main/engine/clock.js';
import type { RunRow } from '../../main/engine/domain/types.js';
import { collectMetrics } from '../../main/engine/metrics/collect.js';
import { DAY_MS } from '../../main/engine/keep-days.js';
import { DEFAULT_SETTINGS } from '../../main/engine/settings.js';
import { Retention } from '../../main/engine/retention.js';
import { Store } from '../../main/engine/store/store.js';
import { scratch } from '../helpers/engine-fixture.js';

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
const OLD = NOW - 40 * DAY_MS;
const RECENT = NOW - 2 * DAY_MS;

let box: ReturnType<typeof scratch>;
let store: Store;
let clock: ManualClock;
beforeEach(() => {
  box = scratch('tend-retention-');
  store = Store.open(join(box.dir, 'tend.db'));
  clock = new ManualClock(NOW);
});
afterEach(() => {
  store.close();
  box.remove();
});

function runDir(day: string, id: string): string {
  const dir = join(box.dir, 'runs', day, id);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'stdout.log'), 'output\n');
  return dir;
}

function run(id: string, routineId: string, at: number, over: Partial<RunRow> = {}): RunRow {
  const row: RunRow = {
    id,
    routineId,
    kind: 'batch',
    cycle: new Date(at).toISOString().slice(0, 10),
    scheduledAt: at,
    attempt: 1,
    status: 'COMPLETED',
    reason: null,
    exitCode: 0,
    signal: null,
    backend: 'local',
    runDir: runDir(new Date(at).toISOString().slice(0, 10), id),
    manual: false,
    notBefore: null,
    createdAt: at,
    startedAt: at + 1000,
    endedAt: at + 4000,
    heartbeatAt: null,
    ...over,
  };
  store.runs.insert(row);
  return row;
}

function job(name: string, at: number, status: 'COMPLETED' | 'ERROR' | 'WAITING', deps: number[] = []): number {
  const id = store.jobs.insert({ name, command: 'true', args: [], cwd: null, env: {}, computer: null, dependencies: deps }, status, at);
  const dir = runDir(new Date(at).toISOString().slice(0, 10), `job-${id}`);
  store.db.prepare(`UPDATE jobs SET run_dir = ?, ended_at = ? WHERE id = ?`).run(dir, status === 'WAITING' ? null : at + 1000, id);
  return id;
}

const metric = (text: string, name: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith(name))
    .sort();

describe('history retention', () => {
  it('removes finished runs older than the kept days with their directories, keeping the rest, and the metrics still count them', async () => {
    const oldA = [run('a1', 'me@h:a', OLD), run('a2', 'me@h:a', OLD + 60_000, { status: 'ERROR', exitCode: 3 })];
    const latestA = run('a3', 'me@h:a', RECENT);
    const onlyB = run('b1', 'me@h:b', OLD); // the latest (and only) run of b: kept although old
    const stuck = run('c1', 'me@h:c', OLD, { status: 'RUNNING', endedAt: null });
    run('c2', 'me@h:c', RECENT);
    const remote = run('d1', 'me@h:d', OLD, { backend: 'pool:u@far', runDir: join(box.dir, 'elsewhere', 'd1') });
    mkdirSync(remote.runDir!, { recursive: true });
    run('d2', 'me@h:d', RECENT);
    const outside = run('e1', 'me@h:e', OLD, { runDir: join(box.dir, 'not-runs', 'e1') });
    mkdirSync(outside.runDir!, { recursive: true });
    run('e2', 'me@h:e', RECENT);
    const before = collectMetrics(store, NOW, null, DEFAULT_SETTINGS.workerOfflineMs);

    const r = await new Retention(store, box.dir, clock, { keepDays: 30 }).sweep();

    expect(r).toMatchObject({ runs: 4, more: false, dirs: 2 });
    const left = store.db.prepare(`SELECT id FROM runs ORDER BY id`).pluck().all();
    expect(left).toEqual(['a3', 'b1', 'c1', 'c2', 'd2', 'e2']);
    for (const x of oldA) expect(existsSync(x.runDir!)).toBe(false);
    expect(existsSync(join(box.dir, 'runs', oldA[0]!.cycle))).toBe(true); // b1 and c1 still live in that day
    for (const x of [latestA, onlyB, stuck]) expect(existsSync(x.runDir!)).toBe(true);
    // A run of another host, and a path outside this data dir's runs dir, lose their row only.
    expect(existsSync(remote.runDir!)).toBe(true);
    expect(existsSync(outside.runDir!)).toBe(true);

    const after = collectMetrics(store, NOW, null, DEFAULT_SETTINGS.workerOfflineMs);
    for (const name of ['tend_runs_total', 'tend_run_duration_seconds', 'tend_last_success_timestamp_seconds']) expect(metric(after, name)).toEqual(metric(before, name));
    expect(metric(after, 'tend_runs_total{')).toContain('tend_runs_total{routine="me@h:a",kind="batch",outcome="error"} 1');
  });

  it('removes an emptied day directory; keeps a job another job still depends on', async () => {
    const a = job('a', OLD, 'COMPLETED');
    const b = job('b', OLD + 1000, 'COMPLETED', [a]); // b depends on a: b goes first, then a
    const c = job('c', OLD + 2000, 'COMPLETED');
    const d = job('d', RECENT, 'WAITING', [c]); // still waits on c: c stays
    const e = job('e', RECENT, 'ERROR');
    const day = join(box.dir, 'runs', new Date(OLD).toISOString().slice(0, 10));

    const r = await new Retention(store, box.dir, clock, { keepDays: 30, batch: 1 }).sweep();

    expect(r.jobs).toBe(2);
    expect(store.db.prepare(`SELECT id FROM jobs ORDER BY id`).pluck().all()).toEqual([c, d, e]);
    expect(store.jobs.dependenciesOf(d)).toEqual([c]);
    expect(existsSync(join(day, `job-${a}`))).toBe(false);
    expect(existsSync(join(day, `job-${b}`))).toBe(false);
    expect(existsSync(join(day, `job-${c}`))).toBe(true);

    store.db.prepare(`UPDATE jobs SET status = 'COMPLETED', ended_at = ? WHERE id = ?`).run(RECENT, d);
    clock.set(NOW + 31 * DAY_MS);
    await new Retention(store, box.dir, clock, { keepDays: 30 }).sweep();
    expect(store.db.prepare(`SELECT id FROM jobs`).pluck().all()).toEqual([]);
    expect(existsSync(day)).toBe(false);
  });

  it('removes old events and commands, and reports of work no longer in flight', async () => {
    clock.set(OLD);
    store.events.append({ type: 'run:completed', message: 'old' }, OLD);
    const fetched = store.pool.enqueue('u@w', 'start', { runId: 'x' }, OLD, DEFAULT_SETTINGS.commandTtlMs);
    store.pool.fetch('u@w', OLD + 1);
    const neverFetched = store.pool.enqueue('u@v', 'start', { runId: 'y' }, OLD, DEFAULT_SETTINGS.commandTtlMs);
    const report = { kind: 'run' as const, computer: 'u@w', state: 'done' as const, pid: 5, exitCode: 0, signal: null, reason: null, runDir: '/x', startedAt: OLD, endedAt: OLD, heartbeatAt: null };
    store.pool.saveReport({ ...report, refId: 'gone' }, OLD);
    store.pool.saveReport({ ...report, refId: 'inflight', state: 'running' }, OLD);
    store.ledger.record('run', 'inflight', 'pool:u@w', { id: 'inflight' }, OLD);
    store.events.append({ type: 'run:completed', message: 'new' }, RECENT);
    const recent = store.pool.enqueue('u@w', 'start', { runId: 'z' }, RECENT, DEFAULT_SETTINGS.commandTtlMs);
    clock.set(NOW);

    const r = await new Retention(store, box.dir, clock, { keepDays: 30 }).sweep();

    expect(r).toMatchObject({ events: 1, commands: 2, reports: 1 });
    expect(store.events.recent(10).map((e) => e.message)).toEqual(['new']);
    expect(store.pool.command(fetched)).toBeNull();
    expect(store.pool.command(neverFetched)).toBeNull();
    expect(store.pool.command(recent)).not.toBeNull();
    expect(store.pool.report('run', 'gone')).toBeNull();
    expect(store.pool.report('run', 'inflight')).not.toBeNull();
  });

  it('works in bounded sweeps: a sweep that hit its limit says so, and the next pass goes on', async () => {
    for (let i = 0; i < 25; i++) run(`r${String(i).padStart(2, '0')}`, 'me@h:r', OLD + i * 1000);
    run('last', 'me@h:r', RECENT);
    const retention = new Retention(store, box.dir, clock, { keepDays: 30, batch: 4, maxPerSweep: 10, everyMs: 60_000 });
    expect(await retention.maybeSweep()).toMatchObject({ runs: 10, more: true });
    expect(await retention.maybeSweep()).toMatchObject({ runs: 10, more: true });
    expect(await retention.maybeSweep()).toMatchObject({ runs: 5, more: false });
    expect(await retention.maybeSweep()).toBeNull(); // nothing due until everyMs has passed
    clock.advance(60_000);
    expect(await retention.maybeSweep()).toMatchObject({ runs: 0 });
    expect(store.db.prepare(`SELECT id FROM runs`).pluck().all()).toEqual(['last']);
  });

  it('keeps everything when told to', async () => {
    run('a1', 'me@h:a', OLD);
    run('a2', 'me@h:a', RECENT);
    expect(await new Retention(store, box.dir, clock, { keepDays: null }).maybeSweep()).toBeNull();
    expect(store.runs.get('a1')).not.toBeNull();
  });
});

describe("a worker host's own job directories", () => {
  it('are removed once older than the kept days, unless its ledger still holds them; other files stay', async () => {
    const { WorkerAgent } = await import('../../worker/remote/agent.js');
    const lines: string[] = [];
    const agent = new WorkerAgent({ server: 'http://127.0.0.1:9', token: 't', computer: 'u@w', batchSlots: 0, dataDir: box.dir, version: 'test', log: (l) => lines.push(l), keepDays: 30 });
    try {
      const oldDay = new Date(OLD).toISOString().slice(0, 10);
      const running = runDir(oldDay, 'rt-1'); // a realtime run started 40 days ago, still going
      const done = runDir(oldDay, 'job-7');
      const fresh = runDir(new Date(RECENT).toISOString().slice(0, 10), 'job-8');
      mkdirSync(join(box.dir, 'runs', 'not-a-day'), { recursive: true });
      agent.store.ledger.record('run', 'rt-1', 'local', { runDir: running, pid: 1 }, OLD);

      expect(agent.maybePrune(NOW)).toBe(1);
      expect(existsSync(done)).toBe(false);
      expect(existsSync(running)).toBe(true);
      expect(existsSync(fresh)).toBe(true);
      expect(existsSync(join(box.dir, 'runs', 'not-a-day'))).toBe(true);
      expect(lines).toContain('removed 1 job directory older than 30 days');
      expect(agent.maybePrune(NOW + 60_000)).toBe(0); // not again before ten minutes

      agent.store.ledger.clear('run', 'rt-1'); // reported and acknowledged
      expect(agent.maybePrune(NOW + 11 * 60_000)).toBe(1);
      expect(existsSync(join(box.dir, 'runs', oldDay))).toBe(false);
    } finally {
      agent.store.close();
    }
  });
});
