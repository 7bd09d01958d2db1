// The typed contract's implementation: one validated function per channel. The HTTP server and
// the Electron IPC handlers both dispatch here; nothing else interprets requests.
import { z } from 'zod';
import { workerOnline } from '../domain/online.js';
import { decimalInt } from '../domain/schema.js';
import { DayField, RoutineInputSchema, ROUTINE_ID, zodIssues } from '../domain/schema.js';
import { dayBounds } from '../timing/day.js';
import { invalid, notFound } from '../errors.js';
import type { Engine } from '../engine.js';
import { JobInputSchema, getJob, postJob } from '../ops/jobs.js';
import { clearRoutine, editRoutine, pauseRoutine, removeRoutine, resumeRoutine, saveRoutine } from '../ops/routines.js';
import { setScheduleMode } from '../ops/schedule-mode.js';
import { forgetWorker } from '../ops/workers.js';
import { listRoutines, publicDef, runSummary, showRoutine } from '../ops/views.js';
import { daemonStatus } from '../daemon/status.js';
import { doctor } from '../daemon/doctor.js';
import { nextRuns } from '../timing/next.js';
import { parseRoutine } from '../domain/schema.js';
import { maskText, secretsOf } from '../mask.js';
import type { Channel } from '../../../contract/routes.js';

const Id = z.strictObject({ id: z.string().regex(ROUTINE_ID, 'must look like user@COMPUTER:path/to/code') });
const JobId = z.strictObject({ id: decimalInt(1) });
const RunId = z.strictObject({ id: z.string().regex(/^[\w.-]{1,80}$/, 'a run id') });
const Empty = z.strictObject({});

export const INPUTS = {
  'routines.list': Empty,
  'routines.show': Id,
  'routines.create': RoutineInputSchema,
  'routines.edit': z.strictObject({ id: Id.shape.id, changes: z.record(z.string(), z.unknown()) }),
  'routines.remove': Id,
  'routines.pause': Id,
  'routines.resume': Id,
  'routines.clear': Id,
  'routines.run': Id,
  'routines.restart': Id,
  'routines.stop': Id,
  'timing.preview': z.strictObject({ timing: z.record(z.string(), z.unknown()), count: z.number().int().min(1).max(50).optional() }),
  'schedules.list': Empty,
  'schedules.setMode': z.strictObject({ name: z.string().min(1).max(64), mode: z.enum(['active', 'observe']) }),
  'jobs.list': z.strictObject({ status: z.enum(['WAITING', 'PENDING', 'FETCHED', 'RUNNING', 'COMPLETED', 'ERROR', 'CANCEL']).optional(), limit: decimalInt(1, 10_000).optional() }),
  'jobs.show': JobId,
  'jobs.post': JobInputSchema,
  'jobs.cancel': JobId,
  'runs.list': z.strictObject({
    day: DayField.optional(),
    after: z.string().regex(/^[\w.-]{1,80}$/, 'a run id (the last of the previous page)').optional(),
    limit: decimalInt(1, 10_000).optional(),
  }),
  'runs.show': RunId,
  'runs.log': z.strictObject({ id: RunId.shape.id, stream: z.enum(['stdout', 'stderr']).optional(), tailBytes: decimalInt(1, 4 * 1024 * 1024).optional() }),
  'workers.list': Empty,
  'workers.forget': z.strictObject({ computer: z.string().regex(/^[^@\s:]+@[^@\s:]+$/, 'must look like user@COMPUTER'), force: z.boolean().optional() }),
  'daemon.status': Empty,
  'daemon.doctor': Empty,
  'events.recent': z.strictObject({ after: decimalInt(0).optional(), limit: decimalInt(1, 1000).optional() }),
} satisfies Record<Channel, z.ZodType>;

export function makeMethods(engine: Engine) {
  const store = engine.store;
  const now = () => engine.clock.now();
  return {
    'routines.list': () => listRoutines(store, now()),
    'routines.show': (a: z.output<typeof Id>) => showRoutine(store, a.id, now()),
    'routines.create': (a: unknown) => {
      const r = saveRoutine(store, a, { now: now() }, 'create');
      engine.nudge();
      return publicDef(r.def);
    },
    'routines.edit': (a: { id: string; changes: Record<string, unknown> }) => {
      // An id is the routine's identity: a rename would be silently ignored by the overlay.
      if (a.changes.id !== undefined && a.changes.id !== a.id) {
        throw invalid({ path: 'changes.id', message: `the id cannot be changed (it is ${a.id}): add the routine under the new id and remove this one` });
      }
      const def = editRoutine(store, a.id, a.changes, { now: now() });
      engine.nudge();
      return publicDef(def);
    },
    'routines.remove': (a: { id: string }) => {
      removeRoutine(store, a.id, now());
      engine.nudge();
      return { id: a.id, removed: true };
    },
    'routines.pause': (a: { id: string }) => pauseRoutine(store, a.id, now()),
    'routines.resume': (a: { id: string }) => {
      const t = resumeRoutine(store, a.id, now());
      engine.nudge();
      return t;
    },
    'routines.clear': (a: { id: string }) => {
      const t = clearRoutine(store, a.id, now());
      engine.nudge();
      return t;
    },
    'routines.run': (a: { id: string }) => runSummary(engine.runNow(a.id)),
    'routines.restart': async (a: { id: string }) => {
      const r = await engine.restart(a.id);
      return { stopped: r.stopped.map(runSummary), started: runSummary(r.started) };
    },
    'routines.stop': async (a: { id: string }) => (await engine.stopRoutine(a.id)).map(runSummary),
    'timing.preview': (a: { timing: Record<string, unknown>; count?: number }) => {
      // Validated exactly as a routine would be: the editor shows the same messages.
      const def = parseRoutine({ id: 'preview@host:preview', command: 'true', ...a.timing }, { now: now() });
      if (!def.timing) return [];
      const from = now();
      if (def.timing.mode === 'at') return [def.timing.at];
      return nextRuns(def.timing, from, def.tz, a.count ?? 5).map((ms) => new Date(ms).toISOString());
    },
    'schedules.list': () => store.routines.schedules(),
    'schedules.setMode': (a: { name: string; mode: 'active' | 'observe' }) => {
      setScheduleMode(store, a.name, a.mode, now());
      engine.nudge();
      return { name: a.name, mode: a.mode };
    },
    'jobs.list': (a: { status?: string; limit?: number }) => store.jobs.list(a.limit ?? 1000).filter((j) => !a.status || j.status === a.status),
    'jobs.show': (a: { id: number }) => getJob(store, a.id),
    'jobs.post': (a: unknown) => {
      const job = postJob(store, a, now());
      engine.nudge();
      return job;
    },
    'jobs.cancel': async (a: { id: number }) => {
      await engine.cancelJob(a.id);
      return getJob(store, a.id);
    },
    // A page of the day (default 5,000 runs); the next page starts after the last id returned.
    'runs.list': (a: { day?: string; after?: string; limit?: number }) => {
      const { from, to } = dayBounds(now(), a.day);
      const page = store.runs.dayPage(from, to, a.after ?? null, a.limit ?? 5000);
      if (!page) throw invalid({ path: 'after', message: `unknown run ${a.after}` });
      return page.map((r) => ({ ...runSummary(r), routineId: r.routineId, kind: r.kind }));
    },
    'runs.show': async (a: { id: string }) => {
      const run = store.runs.get(a.id);
      if (!run) throw notFound(`run ${a.id}`);
      return { ...runSummary(run), routineId: run.routineId, kind: run.kind, manifest: await engine.runFiles.manifest(run) };
    },
    'runs.log': async (a: { id: string; stream?: 'stdout' | 'stderr'; tailBytes?: number }) => {
      const run = store.runs.get(a.id);
      if (!run) throw notFound(`run ${a.id}`);
      // The routine's own secret values, echoed in its output, are masked where Tend serves it (the file keeps them).
      const text = maskText(await engine.runFiles.tail(run, a.stream ?? 'stdout', a.tailBytes ?? 64 * 1024), secretsOf(store.routines.get(run.routineId)));
      return { runId: run.id, stream: a.stream ?? 'stdout', text };
    },
    'workers.list': () =>
      (store.db.prepare(`SELECT computer, version, slots, running, last_seen AS lastSeen, registered_at AS registeredAt FROM workers ORDER BY computer`).all() as { lastSeen: number | null }[]).map((w) => ({ ...w, online: workerOnline(w.lastSeen, now(), engine.settings.workerOfflineMs) })),
    'workers.forget': (a: { computer: string; force?: boolean }) => {
      // engine.tx: listeners hear the events once the forgetting is committed.
      const r = engine.tx(() => forgetWorker(store, (e) => engine.log(e), a.computer, { force: a.force, now: now(), workerOfflineMs: engine.settings.workerOfflineMs }));
      engine.nudge();
      return r;
    },
    'daemon.status': () => daemonStatus(engine.dataDir, store, now()),
    // The full check reads every page: off the event loop, and a result under 10 minutes old is reused.
    'daemon.doctor': async () => doctor(engine.dataDir, store, now(), await engine.integrity.recent(10 * 60_000)),
    'events.recent': (a: { after?: number; limit?: number }) => (a.after !== undefined ? store.events.after(a.after, a.limit ?? 200) : store.events.recent(a.limit ?? 200)),
  } satisfies Record<Channel, (a: never) => unknown>;
}

export type Methods = ReturnType<typeof makeMethods>;

/** Validate then call: the single entry for every transport. */
export async function dispatch(methods: Methods, channel: Channel, raw: unknown): Promise<unknown> {
  const schema = INPUTS[channel] as z.ZodType;
  const parsed = schema.safeParse(raw ?? {});
  if (!parsed.success) throw invalid(zodIssues(parsed.error));
  const fn = methods[channel] as (a: unknown) => unknown;
  return await fn(channel === 'routines.create' || channel === 'jobs.post' ? raw : parsed.data);
}
