// `tend mcp`: Tend's state for agents, over the Model Context Protocol (the official SDK's
// McpServer). Read tools read the data dir's SQLite directly (read-only); action tools exist only
// with --allow-actions and act through the owning daemon's API (actions.ts). Every answer is
// bounded and has secrets masked; arguments are validated by their schema, and a bad one gets an
// error naming it.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { DayField } from '../domain/schema.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { existsSync } from 'node:fs';
import { z } from 'zod';
import { paths } from '../datadir.js';
import { checkIntegrity } from '../store/integrity.js';
import { doctor } from '../daemon/doctor.js';
import { daemonStatus } from '../daemon/status.js';
import { expandRoutineId, ROUTINE_ID } from '../domain/schema.js';
import { ApiError } from '../../../contract/api-error.js';
import { errorMessage, TendError } from '../errors.js';
import { JobInputSchema } from '../ops/jobs.js';
import type { Settings } from '../settings.js';
import type { RunFiles } from '../run-files.js';
import { Store } from '../store/store.js';
import { tendVersion } from '../version.js';
import { daemonCall } from './actions.js';
import { failures, jobs, routineDetail, routines, runLog, runsOfDay, workers } from './read.js';
import { whatIsWaiting } from './waiting.js';

/** No answer is longer than this many characters. */
export const MAX_TEXT = 60_000;

export interface TendMcpOptions {
  dataDir: string;
  allowActions: boolean;
  /** What the daemon also reads (maxParallel, workerOfflineMs), as `tend mcp` was started with. */
  settings: Settings;
  now?: () => number;
  /** How runs' output is read (through each run's backend), over the store this server opened. */
  runFiles: (store: Store) => RunFiles;
}

const routineId = z
  .string()
  .min(1)
  .max(1000)
  .describe('Routine id `user@COMPUTER:path/to/code`; a bare `path/to/code` means this machine\'s user@HOST')
  .transform((v, ctx) => {
    const full = expandRoutineId(v.trim());
    if (!ROUTINE_ID.test(full)) {
      ctx.addIssue({ code: 'custom', message: 'must look like user@COMPUTER:path/to/code' });
      return z.NEVER;
    }
    return full;
  });
const limit = (def: number, max: number, what: string) => z.number().int().min(1).max(max).optional().describe(`${what} (default ${def}, at most ${max})`);
const day = DayField;
const JobStatus = z.enum(['WAITING', 'PENDING', 'FETCHED', 'RUNNING', 'COMPLETED', 'ERROR', 'CANCEL']);

const INSTRUCTIONS = `Tend schedules routines (recurring batch runs and long-running realtime processes) and one-off batch jobs on this machine and its workers.
Start with \`routines\` (ids and state) or \`runs_today\`; \`failures\` explains what broke (exit reason + stderr tail); \`waiting\` explains what has not started and why; \`routine\` shows one definition with its next run times; \`run_log\` reads a run's output.
Times are ISO 8601 UTC. Secret-looking arguments and environment values are masked as ***.`;

function text(value: unknown, summary?: string): CallToolResult {
  let body = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  if (summary) body = `${summary}\n${body}`;
  if (body.length > MAX_TEXT) body = `${body.slice(0, MAX_TEXT)}\n… [truncated: ${body.length - MAX_TEXT} more characters; ask for less with limit, day, schedule or maxBytes]`;
  return { content: [{ type: 'text', text: body }] };
}

function failure(err: unknown): CallToolResult {
  // Ours (arguments checked here) or the daemon's (an action refused): both keep code and issues.
  const e = err instanceof TendError || err instanceof ApiError ? err : null;
  // The daemon's message for bad input already is its issues, joined: not said twice.
  const listed = e?.issues.filter((i) => !e.message.includes(i.message)) ?? [];
  const issues = listed.length ? `\n${listed.map((i) => `- ${i.path ? `argument ${i.path}: ` : ''}${i.message}`).join('\n')}` : '';
  const code = e ? `${e.code}: ` : '';
  return { content: [{ type: 'text', text: `${code}${errorMessage(err)}${issues}` }], isError: true };
}

export function createTendMcpServer(o: TendMcpOptions): { server: McpServer; close: () => void } {
  const now = o.now ?? (() => Date.now());
  let store: Store | null = null;
  let files: RunFiles | null = null;
  const db = paths(o.dataDir).db;
  const open = (): Store => {
    if (store?.db.open) return store;
    if (!existsSync(db)) throw new TendError('NOT_FOUND', `no Tend database at ${db} yet: nothing has been defined in this data dir (TEND_DATA_DIR=${o.dataDir})`);
    store = Store.open(db, { readonly: true });
    files = o.runFiles(store);
    return store;
  };
  /** Reading output through the backends, over the store open() opened. */
  const openFiles = (): RunFiles => (open(), files!);
  const server = new McpServer({ name: 'tend', version: tendVersion() }, { instructions: INSTRUCTIONS });
  const read = { readOnlyHint: true, openWorldHint: false } as const;

  const tool = <S extends z.ZodType>(name: string, description: string, input: S, annotations: Record<string, boolean>, fn: (a: z.output<S>) => Promise<CallToolResult> | CallToolResult) =>
    server.registerTool(name, { description, inputSchema: input as never, annotations }, (async (args: z.output<S>) => {
      try {
        return await fn(args);
      } catch (err) {
        return failure(err);
      }
    }) as never);

  tool(
    'routines',
    'List routines: id, schedule, kind (batch/realtime), trigger state, next run, status today, last run. Use it to find routine ids.',
    z.strictObject({ schedule: z.string().min(1).max(64).optional().describe('Only this schedule'), limit: limit(200, 1000, 'How many routines') }),
    read,
    (a) => {
      const r = routines(open(), now(), { schedule: a.schedule, limit: a.limit ?? 200 });
      return text(r, `${r.routines.length} of ${r.total} routine(s)${r.truncated ? ' (truncated: raise limit or filter by schedule)' : ''}`);
    },
  );

  tool(
    'runs_today',
    "What ran today, grouped by schedule: each run's routine, status, start, end and duration (ms), exit code and reason. 'Today' is this machine's local day unless `day` is given.",
    z.strictObject({ day: day.optional().describe('Another day, YYYY-MM-DD (local)'), schedule: z.string().min(1).max(64).optional().describe('Only this schedule'), limit: limit(200, 1000, 'How many runs') }),
    read,
    (a) => {
      const r = runsOfDay(open(), now(), { day: a.day, schedule: a.schedule, limit: a.limit ?? 200 });
      return text(r, `${r.total} run(s) on ${r.day}${r.truncated ? ' (truncated: raise limit or filter by schedule)' : ''}`);
    },
  );

  tool(
    'failures',
    'What failed: runs that ended in ERROR (non-zero exit, signal, timeout, launch failure, crash loop) and failed batch jobs, newest first, each with its exit reason and the tail of its stderr; plus realtime routines that keep restarting.',
    z.strictObject({
      sinceHours: z.number().min(0.01).max(24 * 31).optional().describe('How far back, in hours (default 24, at most 744)'),
      limit: limit(20, 100, 'How many failed runs'),
      stderrBytes: z.number().int().min(0).max(16_384).optional().describe('Bytes of stderr tail per failure (default 2000, at most 16384)'),
    }),
    read,
    async (a) => {
      const r = await failures(open(), openFiles(), now(), { sinceHours: a.sinceHours ?? 24, limit: a.limit ?? 20, stderrBytes: a.stderrBytes ?? 2000 });
      return text(r, `${r.runs.length} failed run(s) and ${r.jobs.length} failed job(s) since ${r.since}`);
    },
  );

  tool(
    'waiting',
    'What is waiting and why: runs not started yet (PENDING, DELAYED, STARTING), realtime routines not running, batch jobs not started, each with a category (dependency, time, slot, backend, worker, observe-only, overlap, daemon, paused, …) and a reason; plus batch runs due in the next 24 hours.',
    z.strictObject({ limit: limit(100, 500, 'How many items') }),
    read,
    (a) => {
      const r = whatIsWaiting(open(), o.dataDir, now(), { limit: a.limit ?? 100, maxParallel: o.settings.maxParallel, workerOfflineMs: o.settings.workerOfflineMs });
      return text(r, `${r.total} waiting${r.daemon.running ? '' : ` — ${r.daemon.note}`}`);
    },
  );

  tool(
    'routine',
    'One routine: its definition (secrets masked), trigger state, the next run times, dependencies and dependents, and its recent runs.',
    z.strictObject({ id: routineId, history: limit(10, 50, 'Recent runs to include'), next: limit(5, 20, 'Next run times to include') }),
    read,
    (a) => text(routineDetail(open(), a.id, now(), { history: a.history ?? 10, next: a.next ?? 5 })),
  );

  tool(
    'run_log',
    "The tail of a run's captured stdout or stderr (secrets of its definition masked). `id` is a run id, or a routine id for its latest run.",
    z.strictObject({
      id: z.string().min(1).max(1000).describe('A run id, or a routine id (its latest run)'),
      stream: z.enum(['stdout', 'stderr']).optional().describe('Which stream (default stdout)'),
      maxBytes: z.number().int().min(1).max(65_536).optional().describe('Bytes from the end (default 8000, at most 65536)'),
      lines: z.number().int().min(1).max(5000).optional().describe('Only the last N lines of those bytes'),
    }),
    read,
    async (a) => {
      const r = await runLog(open(), openFiles(), a.id.trim(), { stream: a.stream ?? 'stdout', maxBytes: a.maxBytes ?? 8000, lines: a.lines });
      return text(`run ${r.runId} of ${r.routineId} (${r.status}), ${r.stream}${r.note ? ` — ${r.note}` : ''}:\n${r.text}`);
    },
  );

  tool('workers', 'Worker hosts of the pool: online or not, last seen, version, batch slots and jobs running.', z.strictObject({}), read, () => text(workers(open(), now(), o.settings.workerOfflineMs)));

  tool(
    'jobs',
    'One-off batch jobs, newest first: status, command (secrets masked), dependencies, exit and reason.',
    z.strictObject({ status: JobStatus.optional().describe('Only jobs in this status'), limit: limit(50, 500, 'How many jobs') }),
    read,
    (a) => text(jobs(open(), { status: a.status, limit: a.limit ?? 50 })),
  );

  tool(
    'daemon_status',
    "The daemon: who owns the data dir, heartbeat freshness, API address, today's run counts, jobs, jobs in flight, next due run, recent failures, last pass, webhook deliveries.",
    z.strictObject({}),
    read,
    () => {
      const s = daemonStatus(o.dataDir, existsSync(db) ? open() : null, now());
      return text(s, s.healthy ? 'daemon healthy' : s.owner?.alive ? 'daemon running but its heartbeat is stale' : 'no daemon running: nothing is being scheduled');
    },
  );

  tool('doctor', 'Actionable findings about this installation (stale pidfile, database integrity, permissions, disk, failing or delayed routines, silent workers), each with what to do.', z.strictObject({}), read, async () => {
    const f = doctor(o.dataDir, existsSync(db) ? open() : null, now(), existsSync(db) ? await checkIntegrity(db) : null);
    return text(f, `${f.filter((x) => x.severity === 'error').length} error(s), ${f.filter((x) => x.severity === 'warn').length} warning(s)`);
  });

  if (o.allowActions) registerActions(o.dataDir, tool);

  return {
    server,
    close: () => {
      if (store?.db.open) store.close();
    },
  };
}

type ToolFn = <S extends z.ZodType>(name: string, description: string, input: S, annotations: Record<string, boolean>, fn: (a: z.output<S>) => Promise<CallToolResult> | CallToolResult) => unknown;

interface RunValue {
  id: string;
  status: string;
  reason: string | null;
}

function registerActions(dataDir: string, tool: ToolFn): void {
  const act = { readOnlyHint: false, openWorldHint: false };
  const one = z.strictObject({ id: routineId });

  tool('run_routine', 'Run a routine now: a batch routine gets a manual run outside its timing; a realtime routine gets started. Goes through the daemon.', one, { ...act, destructiveHint: false }, async (a) => {
    const r = await daemonCall<RunValue>(dataDir, 'routines.run', { id: a.id });
    return text(r, `queued run ${r.id} of ${a.id} (${r.status}); the daemon starts it on its next pass`);
  });

  tool('restart_routine', 'Restart a routine: stop its running instances (TERM, then KILL after the grace period), then start a new run. Goes through the daemon.', one, { ...act, destructiveHint: true }, async (a) => {
    const r = await daemonCall<{ stopped: RunValue[]; started: RunValue }>(dataDir, 'routines.restart', { id: a.id });
    const stopped = r.stopped.length ? `stopped ${r.stopped.map((s) => `${s.id} (${s.status})`).join(', ')}` : 'nothing was running';
    return text(r, `restarted ${a.id}: ${stopped}; started run ${r.started.id} (${r.started.status})`);
  });

  tool('stop_routine', 'Stop the running instances of a routine (TERM to the process group, then KILL after the grace period). A realtime routine stays stopped until run again.', one, { ...act, destructiveHint: true }, async (a) => {
    const r = await daemonCall<RunValue[]>(dataDir, 'routines.stop', { id: a.id });
    return text(r, r.length ? `stopped ${a.id}: ${r.map((s) => `${s.id} (${s.status})`).join(', ')}` : `${a.id}: nothing was running, nothing was stopped`);
  });

  tool('pause_routine', 'Pause a routine: no new runs become due until resumed (runs in flight continue).', one, { ...act, idempotentHint: true }, async (a) => {
    const t = await daemonCall<{ state: string }>(dataDir, 'routines.pause', { id: a.id });
    return text(t, `paused ${a.id}: its trigger is ${t.state}; resume it with resume_routine`);
  });

  tool('resume_routine', 'Resume a paused routine; its timing is recomputed from now.', one, { ...act, idempotentHint: true }, async (a) => {
    const t = await daemonCall<{ state: string; nextRunAt: number | null }>(dataDir, 'routines.resume', { id: a.id });
    return text(t, `resumed ${a.id}: ${t.state}${t.nextRunAt ? `, next run at ${new Date(t.nextRunAt).toISOString()}` : ''}`);
  });

  const JobArgs = z.strictObject({
    ...JobInputSchema.shape,
    command: JobInputSchema.shape.command.describe('Program to run'),
    args: JobInputSchema.shape.args.describe('Its arguments'),
    name: JobInputSchema.shape.name.describe('A name to show (default: the command line)'),
    cwd: JobInputSchema.shape.cwd.describe('Working directory'),
    env: JobInputSchema.shape.env.describe('Extra environment variables'),
    computer: JobInputSchema.shape.computer.describe('Run on this user@COMPUTER (default: here or any worker with a free batch slot)'),
    after: JobInputSchema.shape.after.describe('Job ids that must complete first'),
  });
  tool('post_job', 'Post a one-off batch job: it runs once, here or on a worker with a free batch slot, after the jobs it depends on complete. Goes through the daemon.', JobArgs, { ...act, destructiveHint: false }, async (a) => {
    const j = await daemonCall<{ id: number; status: string; reason: string | null }>(dataDir, 'jobs.post', a as Record<string, unknown>);
    return text({ id: j.id, status: j.status, reason: j.reason }, `posted job ${j.id} (${j.status})${j.status === 'WAITING' ? ': it waits for its dependencies' : ''}`);
  });

  tool('cancel_job', 'Cancel a batch job (a running one is stopped: TERM, then KILL).', z.strictObject({ id: z.number().int().positive().describe('Job id') }), { ...act, destructiveHint: true }, async (a) => {
    const j = await daemonCall<{ id: number; status: string }>(dataDir, 'jobs.cancel', { id: a.id });
    return text({ id: j.id, status: j.status }, `cancelled job ${j.id} (now ${j.status})`);
  });
}
