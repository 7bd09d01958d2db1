// `npm run bench history`: the same work on a data dir with a month of history and on one with the
// same routines and none, in the same run. 100 every-minute + 1,000 every-5-minute routines;
// TEND_BENCH_HISTORY_DAYS (default 30) days of finished runs. Goals (issue 13): every CLI command
// and API route ≤ 1.5× its empty-dir time, daemon start → first pass < 1 s, pass median ≤ 1.2×,
// bytes per stored run small, idle RSS ≤ 1.1×. Each command and route is also measured on the
// history's last day alone; the few whose answer holds today's data are judged against it (AGAINST_TODAY).
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

function wallMs(args: string[], env: NodeJS.ProcessEnv): { ms: number; bytes: number } {
  const t0 = performance.now();
  // `daemon status` exits 1 without a daemon, `logs` without the run's files: timed all the same.
  const r = spawnSync(process.execPath, [TEND, ...args], { env, stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 * 1024 * 1024 });
  if (r.status === null || r.status > 1) throw new Error(`tend ${args.join(' ')} failed (${r.status ?? r.signal})`);
  return { ms: performance.now() - t0, bytes: r.stdout.length };
}

const ROUTE_REPS = 40;

/** User and system CPU time of a process so far. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/** USER_HZ, what /proc counts CPU time in: 100 on Linux whatever the kernel's own tick. */
const CLOCK_TICKS = 100;

const CLI_COMMANDS: Record<string, string[]> = {
  'routine list --json': ['routine', 'list', '--json'],
  'routine show ID --json': ['routine', 'show', ROUTINE, '--json'],
  'daemon status --json': ['daemon', 'status', '--json'],
  'job post -- /bin/true': ['job', 'post', '--json', '--', '/bin/true'],
  'job list --json': ['job', 'list', '--json'],
  'logs ID': ['logs', ROUTINE],
  'schedule export': ['schedule', 'export'],
};

/**
 * Each command's median in each data dir, the dirs taken in turn for every repetition: on a shared,
 * loaded machine the load then falls on all of them alike instead of on whichever dir came last.
 */
function measureCli(dirs: string[], reps: number): { ms: number[]; bytes: number[] }[] {
  const envs = dirs.map((d) => childEnv(d));
  return Object.values(CLI_COMMANDS).map((args) => {
    const times: number[][] = dirs.map(() => []);
    const bytes = dirs.map(() => 0);
    for (let i = 0; i < reps; i++) {
      envs.forEach((env, d) => {
        const r = wallMs(args, env);
        times[d]!.push(r.ms);
        bytes[d] = r.bytes;
      });
    }
    return { ms: times.map((t) => round(median(t), 1)), bytes };
  });
}

/**
 * The GET routes the UI and the CLI's daemon calls read (contract/routes.ts), `RUN` and `JOB` filled
 * in per data dir. What is not timed, and why, is in NOT_TIMED.
 */
const ROUTES = ['/api/routines', `/api/routines/${encodeURIComponent(ROUTINE)}`, '/api/schedules', '/api/jobs', '/api/jobs/1', '/api/runs', '/api/runs/RUN', '/api/runs/RUN/log', '/api/workers', '/api/daemon/status', '/api/events/recent', '/api/daemon/doctor', '/metrics'];

const NOT_TIMED: Record<string, string> = {
  'POST /api/routines/:id/run': 'timed as runNowToCompletedMs (until the run completed)',
  'GET /api/daemon/doctor (first call)': 'the full integrity check, off the event loop: doctorFirstCallMs; later calls reuse it for 10 minutes and are timed',
  'POST /api/routines/:id/{restart,stop,pause,resume,clear}, PUT/DELETE /api/routines/:id, POST /api/routines': 'writes of one routine: its active runs (runs_routine_active) and its definition, no history',
  'POST /api/jobs, /api/jobs/:id/cancel': 'tend job post (timed) writes the same; a cancel reads one job',
  'POST /api/timing/preview': 'reads no database',
  'POST /api/workers/:computer/forget, /api/schedules/:name/mode': "one worker's or schedule's rows",
  'GET /api/events, /api/runs/:id/log/follow': 'server-sent streams from a cursor (events after an id; a file)',
  'GET /api/webhooks, /api/webhooks/deliveries, worker routes': 'not used by the UI; a bounded queue and log (webhook_deliveries)',
};

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

interface Started {
  dir: string;
  child: Daemon;
  api: Api;
  firstPassMs: number;
  nudgeMs: number | null;
  apiDuringStartMaxMs: number;
  apiDuringStartMedianMs: number;
  settleMs: number;
}

/** Start the daemon, time its first pass, run a routine by hand, probe the API while it starts; left running. */
async function startDaemon(dir: string, keepDays: number): Promise<Started> {
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
    const nudge = await nudgeToDone(api);
    // While the first seconds' work (the retention's slices, catch-up) goes on: the API's worst answer.
    const during: number[] = [];
    const probeUntil = performance.now() + 8000;
    while (performance.now() < probeUntil) {
      during.push(await get(api, '/api/daemon/status'));
      await new Promise((r) => setTimeout(r, 100));
    }
    return { dir, child, api, firstPassMs: round(firstPassMs, 0), nudgeMs: Number.isNaN(nudge) ? null : round(nudge, 0), apiDuringStartMaxMs: round(Math.max(...during), 1), apiDuringStartMedianMs: round(median(during), 1), settleMs: 0 };
  } catch (err) {
    await child.stop(60_000);
    throw err;
  }
}

/** Until the start's long work is over (the retention's backlog): how long that took after the probes. */
async function settle(d: Started): Promise<void> {
  const t0 = performance.now();
  await until(() => {
    const st = JSON.parse(readFileSync(join(d.dir, 'daemon.state.json'), 'utf8')) as { history?: { lastSweep: { runs: number; events: number } | null } };
    // Runs and their events: a route asked while a sweep goes on waits for its slice under way.
    const last = st.history?.lastSweep;
    return last && last.runs < 5000 && last.events < 5000 ? true : null;
  }, 600_000, 'the retention to catch up');
  d.settleMs = round(performance.now() - t0 + 8000, 0);
}

/** Resident memory and its anonymous part (V8's heap, malloc: SQLite's page cache), in MiB. */
function memMiB(pid: number): { rss: number; anon: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kB = (re: RegExp) => Number(re.exec(status)?.[1] ?? NaN) / 1024;
  return { rss: kB(/VmRSS:\s+(\d+) kB/), anon: kB(/RssAnon:\s+(\d+) kB/) };
}

interface IdleRss {
  /** The median over the window: what the goal is judged on. */
  median: number;
  min: number;
  max: number;
  /** The anonymous part's median (the rest is file pages: the node binary and libraries, alike in every dir). */
  anonMedian: number;
}

/**
 * Each daemon's RSS over a window (TEND_BENCH_HISTORY_RSS_MS, default 20 s), the daemons sampled in
 * turn every 250 ms; the median is judged, min, max and the anonymous part are reported beside it.
 * An idle daemon's RSS is a sawtooth whatever its history: its passes' garbage grows V8's heap
 * until a collection (anonymous 30 → 66 MiB over 100 s, in the empty, last-day and month daemons
 * alike), while what it holds is the same (live heaps in heap snapshots of an empty and a month's
 * daemon: 11.6 and 11.8 MiB). Where each daemon is on its sawtooth moves the ratio (0.77 to 1.37
 * across runs of the same code, five samples a second apart); the spread shows how far.
 */
async function idleRss(ds: Started[]): Promise<IdleRss[]> {
  await new Promise((r) => setTimeout(r, 3000));
  const windowMs = Number(process.env.TEND_BENCH_HISTORY_RSS_MS ?? 20_000);
  const samples: { rss: number; anon: number }[][] = ds.map(() => []);
  for (const end = performance.now() + windowMs; performance.now() < end; ) {
    ds.forEach((d, k) => samples[k]!.push(memMiB(d.child.pid)));
    await new Promise((r) => setTimeout(r, 250));
  }
  return samples.map((xs) => {
    const rss = xs.map((x) => x.rss);
    return { median: round(median(rss), 1), min: round(Math.min(...rss), 1), max: round(Math.max(...rss), 1), anonMedian: round(median(xs.map((x) => x.anon)), 1) };
  });
}

/**
 * The daemons of every data dir running side by side, settled: RSS before any route is asked, then
 * each route's median with the daemons taken in turn for every repetition (the machine's load falls
 * on all alike), its answer's size, the doctor's first call, RSS again.
 */
async function measureDaemons(ds: Started[], reps: number) {
  const rssBefore = await idleRss(ds);
  // A run and a job each dir has: minute/0's newest run (its first pass made one), the first job `tend job post` made.
  const runs = await Promise.all(ds.map(async (d) => ((await getJson(d.api, `/api/routines/${encodeURIComponent(ROUTINE)}`)) as { lastRun: { id: string } | null }).lastRun?.id ?? 'none'));
  const doctorFirstMs = await sequential(ds.length, async (k) => get(ds[k]!.api, '/api/daemon/doctor'));
  const routes: Record<string, { ms: number[]; bytes: number[]; cpuMs: number[] }> = {};
  for (const r of ROUTES) {
    const path = (k: number) => r.replace('RUN', encodeURIComponent(runs[k]!));
    const bytes = await Promise.all(ds.map(async (d, k) => size(d.api, path(k))));
    const times: number[][] = ds.map(() => []);
    const cpu = ds.map(() => 0);
    // A few ms each: more repetitions than the CLI's, for a median the load does not move much, and
    // the daemon's CPU time per request (the mean over them: the kernel counts it in 10 ms ticks).
    const n = Math.max(reps, ROUTE_REPS);
    for (let i = 0; i < n; i++) {
      for (let k = 0; k < ds.length; k++) {
        const c0 = cpuMs(ds[k]!.child.pid);
        times[k]!.push(await get(ds[k]!.api, path(k)));
        cpu[k] = cpu[k]! + cpuMs(ds[k]!.child.pid) - c0;
      }
    }
    routes[r] = { ms: times.map((t) => round(median(t), 1)), bytes, cpuMs: cpu.map((c) => round(c / n, 2)) };
  }
  const rssAfter = await idleRss(ds);
  return { rssBefore, rssAfter, routes, doctorFirstMs: doctorFirstMs.map((x) => round(x, 1)) };
}

async function size(api: Api, path: string): Promise<number> {
  const res = await fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${api.token}` } });
  return (await res.arrayBuffer()).byteLength;
}

async function sequential(n: number, fn: (i: number) => Promise<number>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await fn(i));
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

/**
 * Which baseline a command or route is judged against. The goal (issue 13) is that history costs
 * nothing: by default the empty data dir (the same routines, no runs). A route whose answer holds
 * today's data answers a bigger question once routines have run at all; the empty dir is not its
 * baseline but the history's last day alone, which gives the same answer as the month (the same
 * routines, the same day) from a database without older history. Those are named here with why;
 * every answer's size is reported beside its times.
 */
const AGAINST_TODAY: Record<string, string> = {
  'routine list --json': "each routine's last run and today's status",
  'routine show ID --json': 'its last 50 runs',
  'logs ID': 'the newest of its last 50 runs that has output (its newest waits, and has none)',
  '/api/routines': "each routine's last run and today's status",
  [`/api/routines/${encodeURIComponent(ROUTINE)}`]: 'its last 50 runs',
  '/api/runs': "a page of today's runs (5,000)",
  '/metrics': 'counters and a duration histogram per routine and outcome, once a routine has run',
  '/api/events/recent': 'the newest 200 events, which a day of runs fills',
  // Same answer size here (no finding), but it looks at each routine's latest run: in the empty dir only the few its first pass made.
  '/api/daemon/doctor': "each routine's latest run (ERROR, DELAYED)",
};

interface Judged {
  emptyMs: number;
  todayMs: number;
  historyMs: number;
  bytes: { empty: number; today: number; history: number };
  cpuMs?: { empty: number; today: number; history: number; judgedRatio: number | null };
  ratio: number;
  ratioToday: number;
  judgedAgainst: 'empty' | 'today';
  /** Why not the empty dir. */
  why?: string;
  judgedRatio: number;
  met: boolean;
}

function judged(name: string, m: { ms: number[]; bytes: number[]; cpuMs?: number[] }): Judged {
  const [emptyMs, todayMs, historyMs] = m.ms as [number, number, number];
  const [empty, today, history] = m.bytes as [number, number, number];
  const why = AGAINST_TODAY[name];
  const judgedAgainst = why ? 'today' : 'empty';
  const judgedRatio = ratio(historyMs, why ? todayMs : emptyMs);
  const cpu = m.cpuMs as [number, number, number] | undefined;
  // The daemon's CPU per request beside the wall time: what a loaded machine's waits do not move
  // (much). Counted in 10 ms ticks, a mean of 40 requests resolves a few ms: no ratio below 2 ms.
  const base = cpu?.[why ? 1 : 0] ?? 0;
  const cpuMs = cpu && { empty: cpu[0], today: cpu[1], history: cpu[2], judgedRatio: base >= 2 ? ratio(cpu[2], base) : null };
  return { emptyMs, todayMs, historyMs, bytes: { empty, today, history }, ...(cpuMs ? { cpuMs } : {}), ratio: ratio(historyMs, emptyMs), ratioToday: ratio(historyMs, todayMs), judgedAgainst, ...(why ? { why } : {}), judgedRatio, met: judgedRatio <= 1.5 };
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
    const dirs = [emptyDir, todayDir, historyDir];
    const cliTimes = measureCli(dirs, reps);
    log('daemon…');
    // Started one after another (the history's last: its start removes a day of runs, minutes of
    // work), then measured side by side once all have settled.
    const started: Started[] = [];
    let daemons: Awaited<ReturnType<typeof measureDaemons>>;
    try {
      for (const d of dirs) started.push(await startDaemon(d, keepDays));
      for (const d of started) await settle(d);
      daemons = await measureDaemons(started, reps);
    } finally {
      for (const d of started) await d.child.stop(60_000);
    }
    const [dEmpty, dToday, dHistory] = started as [Started, Started, Started];
    log('pass…');
    // The first dir measured paid for the JIT's warm-up (its median above the last day's alone, in
    // every run): a scratch copy of the routines takes it, unmeasured.
    buildEmpty(join(root, 'warm-up'), now);
    await measurePass(join(root, 'warm-up'), 30);
    const passEmpty = await measurePass(emptyDir, 30);
    const passHistory = await measurePass(historyDir, 30);
    const passToday = await measurePass(todayDir, 30);

    const cli = Object.fromEntries(Object.keys(CLI_COMMANDS).map((k, i) => [k, judged(k, cliTimes[i]!)]));
    const api = Object.fromEntries(ROUTES.map((r) => [r, judged(r, daemons.routes[r]!)]));
    const worst = (o: Record<string, Judged>, key: 'ratio' | 'ratioToday' | 'judgedRatio') => Math.max(...Object.values(o).map((x) => x[key]));
    const [rssEmpty, rssToday, rssHistory] = daemons.rssAfter.map((x) => x.median) as [number, number, number];
    const [rssBeforeEmpty, rssBeforeToday, rssBeforeHistory] = daemons.rssBefore.map((x) => x.median) as [number, number, number];
    const spread = (xs: IdleRss[]) => Object.fromEntries(['empty', 'today', 'history'].map((k, i) => [k, { min: xs[i]!.min, max: xs[i]!.max, anonMedian: xs[i]!.anonMedian }]));
    return {
      name: 'history',
      description: `100 every-minute + 1,000 every-5-minute routines: ${days} days of history (${runs} runs) against none and against its last day alone (${todayRuns} runs), same run; history daemon keeps ${keepDays} days (a day to remove at start). The scheduled routines are bench@host's, whose worker never connects: their runs wait in every dir alike. Commands and routes take the dirs in turn per repetition; the three daemons run side by side while measured`,
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
      judgedAgainstToday: AGAINST_TODAY,
      notTimed: NOT_TIMED,
      doctorFirstCallMs: { empty: daemons.doctorFirstMs[0], today: daemons.doctorFirstMs[1], history: daemons.doctorFirstMs[2], note: 'reads every page (the full check), off the event loop; reused for 10 minutes (the later calls are timed in api)' },
      daemonStartToFirstPassMs: { empty: dEmpty.firstPassMs, today: dToday.firstPassMs, history: dHistory.firstPassMs },
      retentionCaughtUpAfterMs: { empty: dEmpty.settleMs, today: dToday.settleMs, history: dHistory.settleMs, note: 'after the first pass, until the history daemon had removed its day of expired runs and events (a sweep of at most 5,000 of each per pass, in slices of 200 runs or 1,000 events between passes)' },
      runNowToCompletedMs: { empty: dEmpty.nudgeMs, today: dToday.nudgeMs, history: dHistory.nudgeMs, note: `POST /api/routines/ID/run of ${BY_HAND} (this computer's; the scheduled routines are bench@host's, whose worker never connects, so their runs wait and the daemons launch nothing else) right after the first pass, until the run (a real /bin/true) is COMPLETED; null: not within 30 s` },
      apiDuringStartMs: { empty: { max: dEmpty.apiDuringStartMaxMs, median: dEmpty.apiDuringStartMedianMs }, today: { max: dToday.apiDuringStartMaxMs, median: dToday.apiDuringStartMedianMs }, history: { max: dHistory.apiDuringStartMaxMs, median: dHistory.apiDuringStartMedianMs } },
      passMedianMs: { empty: passEmpty.medianMs, today: passToday.medianMs, history: passHistory.medianMs, ratio: ratio(passHistory.medianMs, passEmpty.medianMs), stepsEmpty: passEmpty.stepMedianMs, stepsToday: passToday.stepMedianMs, stepsHistory: passHistory.stepMedianMs },
      idleRssMiB: { empty: rssEmpty, today: rssToday, history: rssHistory, ratio: ratio(rssHistory, rssEmpty), ratioToday: ratio(rssHistory, rssToday), spread: spread(daemons.rssAfter), note: 'the three daemons side by side, after the doctor and the routes were asked: medians over the window (idleRss)' },
      idleRssBeforeRoutesMiB: { empty: rssBeforeEmpty, today: rssBeforeToday, history: rssBeforeHistory, ratio: ratio(rssBeforeHistory, rssBeforeEmpty), ratioToday: ratio(rssBeforeHistory, rssBeforeToday), spread: spread(daemons.rssBefore), note: 'settled, before any route was asked: medians over the window (idleRss)' },
      goals: {
        // Judged per command and route: against the empty dir, or the last day alone for AGAINST_TODAY's.
        cliRatio: { goal: 1.5, worst: worst(cli, 'judgedRatio'), met: worst(cli, 'judgedRatio') <= 1.5, worstAgainstEmpty: worst(cli, 'ratio'), worstAgainstToday: worst(cli, 'ratioToday') },
        apiRatio: { goal: 1.5, worst: worst(api, 'judgedRatio'), met: worst(api, 'judgedRatio') <= 1.5, worstAgainstEmpty: worst(api, 'ratio'), worstAgainstToday: worst(api, 'ratioToday'), worstCpu: Math.max(...Object.values(api).map((x) => x.cpuMs?.judgedRatio ?? 0)) },
        startToFirstPassMs: { goal: 1000, history: dHistory.firstPassMs, met: dHistory.firstPassMs < 1000 },
        apiDuringStartMs: { goal: 1000, history: dHistory.apiDuringStartMaxMs, met: dHistory.apiDuringStartMaxMs < 1000 },
        runNowDuringStartMs: { goal: 1000, history: dHistory.nudgeMs, met: dHistory.nudgeMs !== null && dHistory.nudgeMs < 1000 },
        passRatio: { goal: 1.2, value: ratio(passHistory.medianMs, passEmpty.medianMs), met: passHistory.medianMs / passEmpty.medianMs <= 1.2 },
        // The daemon idle: settled, before any route was asked, against the empty dir.
        idleRssRatio: { goal: 1.1, value: ratio(rssBeforeHistory, rssBeforeEmpty), met: rssBeforeHistory / rssBeforeEmpty <= 1.1 },
        // Once the routes were asked the heap holds what building their answers took (V8 keeps the
        // capacity): /api/runs' and /metrics' answers are today's data (AGAINST_TODAY), so against the last day alone.
        idleRssAfterRoutesRatio: { goal: 1.1, against: 'today', value: ratio(rssHistory, rssToday), met: rssHistory / rssToday <= 1.1, againstEmpty: ratio(rssHistory, rssEmpty) },
      },
      loadavg: os.loadavg().map((x) => round(x, 2)),
    };
  } finally {
    if (!process.env.TEND_BENCH_KEEP) rmSync(root, { recursive: true, force: true });
    else log(`kept ${root}`);
  }
}
