// `npm run bench history`: the same work on a data dir with a month of history and on one with the
// same routines and none, in the same run. 100 every-minute + 1,000 every-5-minute routines;
// TEND_BENCH_HISTORY_DAYS (default 30) days of finished runs. Goals (issue 13): every CLI command
// and API route ≤ 1.5× its empty-dir time, daemon start → first pass < 1 s, pass median ≤ 1.2×,
// bytes per stored run small, idle RSS ≤ 1.1×.
// TEND_BENCH_HISTORY_CACHE=DIR keeps the built history in DIR and copies it for later runs while it
// is younger than TEND_BENCH_HISTORY_CACHE_HOURS (default 6): the build takes a quarter of an hour.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ManualClock } from '../main/engine/clock.js';
import { Scheduler } from '../main/engine/scheduler/scheduler.js';
import { checkIntegrity } from '../main/engine/store/integrity.js';
import { Store } from '../main/engine/store/store.js';
import { benchRoutines, buildEmpty, buildHistoryCached, buildToday, BY_HAND } from './history-build.js';
import { childEnv, TEND } from '../test/helpers/cli.js';
import { Daemon } from '../test/helpers/daemon.js';
import { TestBackend } from '../test/helpers/test-backend.js';
import { median, round } from './stats.js';

const ROUTINE = 'bench@host:minute/0';

const log = (s: string) => process.stderr.write(`  history: ${s}\n`);

function wallMs(args: string[], env: NodeJS.ProcessEnv): number {
  const t0 = performance.now();
  // `daemon status` exits 1 without a daemon: timed all the same.
  const r = spawnSync(process.execPath, [TEND, ...args], { env, stdio: 'ignore' });
  if (r.status === null || r.status > 1) throw new Error(`tend ${args.join(' ')} failed (${r.status ?? r.signal})`);
  return performance.now() - t0;
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

const CLI_COMMANDS: Record<string, string[]> = {
  'routine list --json': ['routine', 'list', '--json'],
  'routine show ID --json': ['routine', 'show', ROUTINE, '--json'],
  'daemon status --json': ['daemon', 'status', '--json'],
  'job post -- /bin/true': ['job', 'post', '--json', '--', '/bin/true'],
  'schedule export': ['schedule', 'export'],
};

function measureCli(dir: string, reps: number): Record<string, number> {
  const env = childEnv(dir);
  const out: Record<string, number> = {};
  for (const [name, args] of Object.entries(CLI_COMMANDS)) out[name] = round(median(Array.from({ length: reps }, () => wallMs(args, env))), 1);
  return out;
}

const ROUTES = ['/api/routines', `/api/routines/${encodeURIComponent(ROUTINE)}`, '/api/schedules', '/api/jobs', '/api/runs', '/api/workers', '/api/daemon/status', '/api/events/recent', '/metrics'];

interface Api {
  url: string;
  token: string;
}

async function post(api: Api, path: string): Promise<{ id: string }> {
  const res = await fetch(`${api.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/json' }, body: '{}' });
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
  return ((await res.json()) as { value: { id: string } }).value;
}

async function getJson(api: Api, path: string): Promise<unknown> {
  const res = await fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${api.token}` } });
  const body = (await res.json()) as { ok?: boolean; value?: unknown };
  return body.value ?? body;
}

/** Run now by hand, while the start's long work goes on: how long until the daemon has run it (a real /bin/true). */
async function nudgeToDone(api: Api): Promise<number> {
  const t0 = performance.now();
  const run = await post(api, `/api/routines/${encodeURIComponent(BY_HAND)}/run`);
  for (;;) {
    const r = (await getJson(api, `/api/runs/${encodeURIComponent(run.id)}`)) as { status?: string };
    if (r.status === 'COMPLETED' || r.status === 'ERROR') return performance.now() - t0;
    if (performance.now() - t0 > 30_000) return NaN;
    await new Promise((res) => setTimeout(res, 20));
  }
}

async function get(api: Api, path: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${api.token}` } });
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
  return performance.now() - t0;
}

async function until<T>(fn: () => T | null, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = fn();
      if (v) return v;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Start the daemon, time its first pass, probe the API while it starts, then the routes and idle RSS. */
async function measureDaemon(dir: string, keepDays: number, reps: number) {
  const t0 = performance.now();
  const child = new Daemon(dir, { TEND_KEEP_DAYS: String(keepDays), TEND_DAEMON_INTERVAL_MS: '1000' }, ['--quiet']);
  try {
    await until(() => {
      const s = JSON.parse(readFileSync(join(dir, 'daemon.state.json'), 'utf8')) as { pid: number; lastPass: unknown };
      return s.pid === child.pid && s.lastPass ? true : null;
    }, 60_000, 'the first pass');
    const firstPassMs = performance.now() - t0;
    const a = JSON.parse(readFileSync(join(dir, 'api.json'), 'utf8')) as { url: string; token: string };
    const api: Api = { url: a.url, token: a.token };
    const nudgeMs = round(await nudgeToDone(api), 0);
    // While the first seconds' work (the retention's slices, catch-up) goes on: the API's worst answer.
    const during: number[] = [];
    const probeUntil = performance.now() + 8000;
    while (performance.now() < probeUntil) {
      during.push(await get(api, '/api/daemon/status'));
      await new Promise((r) => setTimeout(r, 100));
    }
    // The routes' cost is measured once the start's long work is over (the retention's backlog):
    // how long that took is reported beside it.
    const settleT0 = performance.now();
    await until(() => {
      const st = JSON.parse(readFileSync(join(dir, 'daemon.state.json'), 'utf8')) as { history?: { lastSweep: { runs: number; events: number } | null } };
      // Runs and their events: a route asked while a sweep goes on waits for its slice under way.
      const last = st.history?.lastSweep;
      return last && last.runs < 5000 && last.events < 5000 ? true : null;
    }, 600_000, 'the retention to catch up');
    const settleMs = round(performance.now() - settleT0 + 8000, 0);
    // Idle before any route is asked: what the routes' answers leave in the heap is not in it.
    await new Promise((r) => setTimeout(r, 3000));
    const rssBefore: number[] = [];
    for (let i = 0; i < 3; i++) {
      rssBefore.push(rssMiB(child.pid));
      await new Promise((r) => setTimeout(r, 1000));
    }
    const routes: Record<string, number> = {};
    for (const r of ROUTES) {
      await get(api, r);
      routes[r] = round(median(await sequential(reps, () => get(api, r))), 1);
    }
    const doctorFirstMs = round(await get(api, '/api/daemon/doctor'), 1);
    await new Promise((r) => setTimeout(r, 3000));
    const rss: number[] = [];
    for (let i = 0; i < 5; i++) {
      rss.push(rssMiB(child.pid));
      await new Promise((r) => setTimeout(r, 1000));
    }
    return { firstPassMs: round(firstPassMs, 0), nudgeMs, settleMs, apiDuringStartMaxMs: round(Math.max(...during), 1), apiDuringStartMedianMs: round(median(during), 1), routes, doctorFirstMs, idleRssMiB: round(median(rss), 1), idleRssBeforeRoutesMiB: round(median(rssBefore), 1) };
  } finally {
    await child.stop(60_000);
  }
}

async function sequential(n: number, fn: () => Promise<number>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await fn());
  return out;
}

/** The bench `pass` workload on this data dir: 100 routines made due per pass, a backend that finishes at once. */
async function measurePass(dir: string, passes: number): Promise<{ medianMs: number; stepMedianMs: Record<string, number> }> {
  const store = Store.open(join(dir, 'tend.db'));
  try {
    const clock = new ManualClock(Date.now());
    const scheduler = new Scheduler(store, clock, new Map([['local', new TestBackend('local', { clock, startAs: 'done', record: false })]]), {
      maxParallel: 100_000, leaseTimeoutMs: 60_000, killGraceMs: 1000, misfireAfterMs: 3_600_000, misfireAllCap: 10, workerOfflineMs: 30_000, computer: 'bench@host', owner: 'bench', dataDir: dir,
    });
    const ids = benchRoutines().filter((r) => r.cron).map((r) => r.id);
    const makeDue = store.db.prepare(`UPDATE triggers SET next_run_at = ? WHERE routine_id = ?`);
    await scheduler.pass();
    const times: number[] = [];
    const steps: Record<string, number[]> = {};
    for (let p = 0; p < passes; p++) {
      clock.advance(1000);
      const now = clock.now();
      store.tx(() => {
        for (let k = 0; k < 100; k++) makeDue.run(now - 10, ids[(p * 100 + k) % ids.length]);
      });
      const t0 = performance.now();
      const report = await scheduler.pass();
      times.push(performance.now() - t0);
      for (const [k, v] of Object.entries(report.steps)) (steps[k] ??= []).push(v);
    }
    return { medianMs: round(median(times)), stepMedianMs: Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, round(median(v))])) };
  } finally {
    store.close();
  }
}

function sizes(dir: string): { bytes: number; byObject: Record<string, number> | null } {
  const file = join(dir, 'tend.db');
  let byObject: Record<string, number> | null = null;
  try {
    const db = new Database(file, { readonly: true });
    byObject = Object.fromEntries((db.prepare(`SELECT name, SUM(pgsize) AS b FROM dbstat GROUP BY name ORDER BY b DESC LIMIT 14`).all() as { name: string; b: number }[]).map((r) => [r.name, r.b]));
    db.close();
  } catch {
    // dbstat not compiled in: the file size alone.
  }
  return { bytes: statSync(file).size, byObject };
}

const ratio = (a: number, b: number) => round(a / b, 2);

export async function benchHistory() {
  const days = Number(process.env.TEND_BENCH_HISTORY_DAYS ?? 30);
  const reps = Number(process.env.TEND_BENCH_HISTORY_REPS ?? 5);
  // One day less kept than built: the history daemon starts with a day of runs to remove.
  const keepDays = Math.max(1, Math.ceil(days) - 1);
  const root = mkdtempSync(join(os.tmpdir(), 'tend-bench-history-'));
  const emptyDir = join(root, 'empty');
  const historyDir = join(root, 'history');
  const todayDir = join(root, 'today');
  try {
    const now = Date.now();
    buildEmpty(emptyDir, now);
    const c0 = performance.now();
    const built = buildHistoryCached(historyDir, now, days, process.env.TEND_BENCH_HISTORY_CACHE || null, Number(process.env.TEND_BENCH_HISTORY_CACHE_HOURS ?? 6), log);
    const { runs, buildSeconds: buildS } = built;
    log(built.cachedAgeMinutes ? `copied ${runs} runs built ${built.cachedAgeMinutes} min ago in ${buildS} s (copy: ${round((performance.now() - c0) / 1000, 1)} s)` : `built ${runs} runs in ${buildS} s`);
    const t0 = performance.now();
    const todayRuns = buildToday(todayDir, built.endsAt, now);
    log(`built the history's last day alone (${todayRuns} runs) in ${round((performance.now() - t0) / 1000, 1)} s`);
    const empty = sizes(emptyDir);
    const full = sizes(historyDir);
    const integrity = await checkIntegrity(join(historyDir, 'tend.db'));

    log('CLI…');
    const cliEmpty = measureCli(emptyDir, reps);
    const cliHistory = measureCli(historyDir, reps);
    const cliToday = measureCli(todayDir, reps);
    log('daemon…');
    const dEmpty = await measureDaemon(emptyDir, keepDays, reps);
    const dHistory = await measureDaemon(historyDir, keepDays, reps);
    const dToday = await measureDaemon(todayDir, keepDays, reps);
    log('pass…');
    const passEmpty = await measurePass(emptyDir, 30);
    const passHistory = await measurePass(historyDir, 30);
    const passToday = await measurePass(todayDir, 30);

    // ratio: history against empty (the goal's); ratioToday: against the history's last day alone,
    // whose answers hold the same day (the runs, the counts of the day, every routine's last run).
    const cli = Object.fromEntries(Object.keys(CLI_COMMANDS).map((k) => [k, { emptyMs: cliEmpty[k], todayMs: cliToday[k], historyMs: cliHistory[k], ratio: ratio(cliHistory[k]!, cliEmpty[k]!), ratioToday: ratio(cliHistory[k]!, cliToday[k]!) }]));
    const api = Object.fromEntries(ROUTES.map((r) => [r, { emptyMs: dEmpty.routes[r], todayMs: dToday.routes[r], historyMs: dHistory.routes[r], ratio: ratio(dHistory.routes[r]!, dEmpty.routes[r]!), ratioToday: ratio(dHistory.routes[r]!, dToday.routes[r]!) }]));
    const worst = (o: Record<string, { ratio: number }>) => Math.max(...Object.values(o).map((x) => x.ratio));
    const worstToday = (o: Record<string, { ratioToday: number }>) => Math.max(...Object.values(o).map((x) => x.ratioToday));
    return {
      name: 'history',
      description: `100 every-minute + 1,000 every-5-minute routines: ${days} days of history (${runs} runs) against none and against its last day alone (${todayRuns} runs), same run; history daemon keeps ${keepDays} days (a day to remove at start)`,
      days,
      runs,
      todayRuns,
      buildSeconds: buildS,
      historyCachedMinutesAgo: built.cachedAgeMinutes,
      dbBytes: { empty: empty.bytes, history: full.bytes },
      bytesPerRun: round((full.bytes - empty.bytes) / Math.max(1, runs), 0),
      largestObjects: full.byObject,
      integrityCheckMs: round(integrity.ms, 0),
      cli,
      api,
      doctorFirstCallMs: { empty: dEmpty.doctorFirstMs, history: dHistory.doctorFirstMs, note: 'reads every page (the full check), off the event loop; reused for 10 minutes' },
      daemonStartToFirstPassMs: { empty: dEmpty.firstPassMs, today: dToday.firstPassMs, history: dHistory.firstPassMs },
      retentionCaughtUpAfterMs: { empty: dEmpty.settleMs, history: dHistory.settleMs, note: 'after the first pass, until the history daemon had removed its day of expired runs and events (a sweep of at most 5,000 of each per pass, in slices of 200 runs or 1,000 events between passes)' },
      runNowToCompletedMs: { empty: dEmpty.nudgeMs, history: dHistory.nudgeMs, note: 'POST /api/routines/ID/run right after the first pass, until the run (a real /bin/true) is COMPLETED; null: not within 30 s (the 8 slots of TEND_MAX_PARALLEL are behind the 100-300 real runs each minute starts)' },
      apiDuringStartMs: { empty: { max: dEmpty.apiDuringStartMaxMs, median: dEmpty.apiDuringStartMedianMs }, history: { max: dHistory.apiDuringStartMaxMs, median: dHistory.apiDuringStartMedianMs } },
      passMedianMs: { empty: passEmpty.medianMs, today: passToday.medianMs, history: passHistory.medianMs, ratio: ratio(passHistory.medianMs, passEmpty.medianMs), stepsEmpty: passEmpty.stepMedianMs, stepsToday: passToday.stepMedianMs, stepsHistory: passHistory.stepMedianMs },
      idleRssMiB: { empty: dEmpty.idleRssMiB, today: dToday.idleRssMiB, history: dHistory.idleRssMiB, ratio: ratio(dHistory.idleRssMiB, dEmpty.idleRssMiB), note: 'after the routes and the doctor were asked' },
      idleRssBeforeRoutesMiB: { empty: dEmpty.idleRssBeforeRoutesMiB, today: dToday.idleRssBeforeRoutesMiB, history: dHistory.idleRssBeforeRoutesMiB, ratio: ratio(dHistory.idleRssBeforeRoutesMiB, dEmpty.idleRssBeforeRoutesMiB) },
      goals: {
        cliRatio: { goal: 1.5, worst: worst(cli), met: worst(cli) <= 1.5 },
        apiRatio: { goal: 1.5, worst: worst(api), met: worst(api) <= 1.5 },
        cliRatioToday: { goal: 1.5, worst: worstToday(cli), met: worstToday(cli) <= 1.5 },
        apiRatioToday: { goal: 1.5, worst: worstToday(api), met: worstToday(api) <= 1.5 },
        startToFirstPassMs: { goal: 1000, history: dHistory.firstPassMs, met: dHistory.firstPassMs < 1000 },
        apiDuringStartMs: { goal: 1000, history: dHistory.apiDuringStartMaxMs, met: dHistory.apiDuringStartMaxMs < 1000 },
        runNowDuringStartMs: { goal: 1000, history: dHistory.nudgeMs, met: dHistory.nudgeMs < 1000 },
        passRatio: { goal: 1.2, value: ratio(passHistory.medianMs, passEmpty.medianMs), met: passHistory.medianMs / passEmpty.medianMs <= 1.2 },
        idleRssRatio: { goal: 1.1, value: ratio(dHistory.idleRssMiB, dEmpty.idleRssMiB), met: dHistory.idleRssMiB / dEmpty.idleRssMiB <= 1.1 },
      },
      loadavg: os.loadavg().map((x) => round(x, 2)),
    };
  } finally {
    if (!process.env.TEND_BENCH_KEEP) rmSync(root, { recursive: true, force: true });
    else log(`kept ${root}`);
  }
}
