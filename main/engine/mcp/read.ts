// Read models behind the MCP tools: bounded, secrets masked, times in ISO 8601. Each takes the
// store (read directly: SQLite in WAL mode lets another process read while the daemon writes).
import { dayBounds } from '../timing/day.js';
import { localComputer } from '../domain/computer.js';
import { expandRoutineId } from '../domain/schema.js';
import type { RunRow } from '../domain/types.js';
import { notFound } from '../errors.js';
import { collectSecrets, maskArgs, maskEnv, maskText, secretsOf } from '../mask.js';
export { secretsOf };
import { workerOnline } from '../domain/online.js';
import { listRoutines, runSummary, showRoutine, type RunSummary } from '../ops/views.js';
import type { RunFiles } from '../run-files.js';
import type { Store } from '../store/store.js';
import { nextRuns } from '../timing/next.js';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());


export function routines(store: Store, now: number, o: { schedule?: string; limit: number }) {
  const all = listRoutines(store, now).filter((r) => !o.schedule || r.schedule === o.schedule);
  const shown = all.slice(0, o.limit).map((r) => {
    const reason = r.lastRun?.reason;
    return reason ? { ...r, lastRun: { ...r.lastRun!, reason: maskText(reason, secretsOf(store.routines.get(r.id))) } } : r;
  });
  return { total: all.length, truncated: all.length > o.limit, routines: shown };
}

export interface TodayRun extends RunSummary {
  routineId: string;
  name: string | null;
  kind: 'batch' | 'realtime';
}

export function runsOfDay(store: Store, now: number, o: { day?: string; schedule?: string; limit: number }) {
  const { day, from, to } = dayBounds(now, o.day);
  const defs = new Map(store.routines.allDefs().map((d) => [d.id, d]));
  const runs = store.runs.since(from).filter((r) => r.createdAt < to || (r.startedAt !== null && r.startedAt < to));
  const bySchedule = new Map<string, TodayRun[]>();
  let total = 0;
  let shown = 0;
  for (const r of runs) {
    const def = defs.get(r.routineId) ?? null;
    const schedule = def?.schedule ?? '(removed routines)';
    if (o.schedule && schedule !== o.schedule) continue;
    total++;
    if (shown >= o.limit) continue;
    shown++;
    const list = bySchedule.get(schedule) ?? [];
    const s = runSummary(r);
    list.push({ ...s, reason: s.reason === null ? null : maskText(s.reason, secretsOf(def)), routineId: r.routineId, name: def?.name ?? null, kind: r.kind });
    bySchedule.set(schedule, list);
  }
  const schedules = [...bySchedule].map(([schedule, list]) => {
    const counts: Record<string, number> = {};
    for (const r of list) counts[r.status] = (counts[r.status] ?? 0) + 1;
    return { schedule, counts, runs: list };
  });
  return { day, from: iso(from), to: iso(to), total, truncated: total > shown, schedules };
}

export async function failures(store: Store, files: RunFiles, now: number, o: { sinceHours: number; limit: number; stderrBytes: number }) {
  const since = now - o.sinceHours * 3_600_000;
  const rows = (
    store.db
      .prepare(`SELECT id FROM runs WHERE status = 'ERROR' AND COALESCE(ended_at, created_at) >= ? ORDER BY COALESCE(ended_at, created_at) DESC, rowid DESC LIMIT ?`)
      .pluck()
      .all(since, o.limit + 1) as string[]
  ).map((id) => store.runs.get(id)!);
  const runs = [];
  for (const r of rows.slice(0, o.limit)) {
    const def = store.routines.get(r.routineId);
    const secrets = secretsOf(def);
    runs.push({
      routineId: r.routineId,
      schedule: def?.schedule ?? null,
      ...runSummary(r),
      reason: r.reason === null ? null : maskText(r.reason, secrets),
      exitReason: exitReason(r),
      stderrTail: r.runDir ? maskText(await files.tail(r, 'stderr', o.stderrBytes), secrets) : null,
      stderrNote: r.runDir ? null : 'never started: no output',
    });
  }
  const failedJobs = (
    store.db
      .prepare(`SELECT id FROM jobs WHERE status = 'ERROR' AND COALESCE(ended_at, updated_at) >= ? ORDER BY COALESCE(ended_at, updated_at) DESC LIMIT ?`)
      .pluck()
      .all(since, o.limit) as number[]
  ).map((id) => store.jobs.get(id)!);
  const jobs = [];
  for (const j of failedJobs) {
    const secrets = collectSecrets(j.args, j.env);
    jobs.push({
      jobId: j.id,
      name: maskText(j.name, secrets),
      computer: j.computer,
      endedAt: iso(j.endedAt),
      exitCode: j.exitCode,
      signal: j.signal,
      reason: j.reason === null ? null : maskText(j.reason, secrets),
      stderrTail: j.runDir ? maskText(await files.tail(j, 'stderr', o.stderrBytes), secrets) : null,
    });
  }
  // Realtime deaths are restarts, not failures; counted so that a flapping routine shows up.
  const exits = store.runs.realtimeExits(since, 20);
  return {
    since: iso(since),
    runs,
    truncated: rows.length > o.limit,
    jobs,
    realtimeRestarts: exits.map((e) => ({ routineId: e.routineId, exits: e.exits, lastAt: iso(e.lastAt) })),
  };
}

/** Exit code or signal in words. */
export function exitReason(r: Pick<RunRow, 'exitCode' | 'signal' | 'reason'>): string {
  if (r.signal) return `killed by ${r.signal}`;
  if (r.exitCode !== null) return `exit code ${r.exitCode}`;
  return r.reason ? 'did not run to an exit' : 'unknown';
}

export function routineDetail(store: Store, id: string, now: number, o: { history: number; next: number }) {
  const d = showRoutine(store, id, now);
  const def = store.routines.get(id)!;
  const t = d.triggerState;
  let upcoming: string[] = d.nextRuns;
  if (t?.state === 'scheduled' && t.nextRunAt !== null && def.timing && def.timing.mode !== 'at' && def.timing.mode !== 'every') {
    upcoming = [t.nextRunAt, ...nextRuns(def.timing, t.nextRunAt, def.tz, o.next - 1)].slice(0, o.next).map((ms) => new Date(ms).toISOString());
  }
  const secrets = secretsOf(def);
  return {
    ...d,
    nextRuns: upcoming,
    triggerState: t ? { ...t, lastError: t.lastError === null ? null : maskText(t.lastError, secrets) } : null,
    history: d.history.slice(0, o.history).map((r) => ({ ...r, reason: r.reason === null ? null : maskText(r.reason, secrets) })),
  };
}

export async function runLog(store: Store, files: RunFiles, ref: string, o: { stream: 'stdout' | 'stderr'; maxBytes: number; lines?: number }) {
  const run = store.runs.get(ref) ?? store.runs.latest(expandRoutineId(ref));
  if (!run) throw notFound(`run or routine ${ref}`);
  const def = store.routines.get(run.routineId);
  let text = await files.tail(run, o.stream, o.maxBytes);
  if (o.lines !== undefined) {
    const all = text.endsWith('\n') ? text.slice(0, -1).split('\n') : text.split('\n');
    text = all.slice(-o.lines).join('\n') + (text.endsWith('\n') && o.lines > 0 ? '\n' : '');
  }
  return {
    runId: run.id,
    routineId: run.routineId,
    status: run.status,
    stream: o.stream,
    text: maskText(text, secretsOf(def)),
    note: !run.runDir ? 'the run has not started: no output yet' : text === '' ? `nothing on ${o.stream} (or the run is on another host: its output stays there)` : null,
  };
}

export function workers(store: Store, now: number, workerOfflineMs: number) {
  const list = store.pool.workers().map((w) => ({
    computer: w.computer,
    online: workerOnline(w.lastSeen, now, workerOfflineMs),
    lastSeen: iso(w.lastSeen),
    version: w.version,
    batchSlots: w.slots,
    running: w.running,
    registeredAt: iso(w.registeredAt),
  }));
  return { thisHost: localComputer(), onlineMeans: `heard from within ${workerOfflineMs / 1000} s`, workers: list };
}

export function jobs(store: Store, o: { status?: string; limit: number }) {
  const list = (o.status ? store.jobs.withStatus(o.status as never, o.limit + 1) : store.jobs.list(o.limit + 1)).map((j) => {
    const secrets = collectSecrets(j.args, j.env);
    return {
      id: j.id,
      name: maskText(j.name, secrets),
      status: j.status,
      command: j.command,
      args: maskArgs(j.args),
      env: maskEnv(j.env),
      computer: j.computer,
      backend: j.backend,
      dependencies: j.dependencies,
      reason: j.reason === null ? null : maskText(j.reason, secrets),
      exitCode: j.exitCode,
      signal: j.signal,
      createdAt: iso(j.createdAt),
      startedAt: iso(j.startedAt),
      endedAt: iso(j.endedAt),
    };
  });
  return { jobs: list.slice(0, o.limit), truncated: list.length > o.limit };
}
