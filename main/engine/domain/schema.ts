// One schema per shape, shared by every boundary (CLI, HTTP, IPC, YAML files). Inputs are
// validated here and normalised into RoutineDef; nothing else parses user input.
import { dayProblem } from '../timing/day.js';
import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { invalid, type Issue } from '../errors.js';
import { localComputer } from './computer.js';
import { shareZod } from '../events/catalogue.js';
import { DurationError, formatDuration as fmt, parseDuration } from '../timing/duration.js';
import { isValidTimeZone, machineTimeZone } from '../timing/tz.js';
import { parseAt, parseRuntimes, resolveIn, validateCron } from '../timing/next.js';
import { SlurmOptionsSchema } from './slurm.js';
import type { RoutineDef, Timing } from './types.js';

shareZod(z);

export const ROUTINE_ID = /^[^@\s:]+@[^@\s:]+:\S.*$/;
/** A full id, or a short one (`reports/parse`) that is completed with a computer when saved. */
const ROUTINE_REF = /^(?:[^@\s:]+@[^@\s:]+:\S.*|[^@\s:][^@\s]*)$/;
const COMPUTER = /^[^@\s:]+@[^@\s:]+$/;
const SCHEDULE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MAX_GRACE_MS = 5 * 60_000;

export const DEFAULTS = {
  schedule: 'default',
  graceMs: 45_000,
  toleranceMs: 5 * 60_000,
  logCapBytes: 64 * 1024 * 1024,
  oneShotRetry: { delayMs: 60_000, windowMs: 3_600_000 },
  noRetry: { delayMs: 0, windowMs: 0 },
} as const;

const durationField = z
  .union([z.string(), z.number()])
  .transform((value, ctx) => {
    try {
      return parseDuration(value);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: err instanceof DurationError ? `duration ${err.message}` : String(err) });
      return z.NEVER;
    }
  });

const SIZE = /^(\d+(?:\.\d+)?)\s*(b|k|kb|kib|m|mb|mib|g|gb|gib)?$/i;
const SIZE_UNITS: Record<string, number> = { b: 1, k: 1024, kb: 1024, kib: 1024, m: 1024 ** 2, mb: 1024 ** 2, mib: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3, gib: 1024 ** 3 };

const sizeField = z.union([z.string(), z.number()]).transform((value, ctx) => {
  const m = SIZE.exec(String(value).trim());
  if (!m) {
    ctx.addIssue({ code: 'custom', message: `"${String(value)}" is not a size: a number of bytes, or a number and a unit (KiB, MiB, GiB), e.g. 65536, 512KiB, 64MiB` });
    return z.NEVER;
  }
  const bytes = Math.round(Number(m[1]) * (SIZE_UNITS[(m[2] ?? 'b').toLowerCase()] ?? NaN));
  if (!Number.isSafeInteger(bytes) || bytes < 4096) {
    ctx.addIssue({ code: 'custom', message: 'size must be at least 4KiB, e.g. 65536, 512KiB, 64MiB' });
    return z.NEVER;
  }
  return bytes;
});

/** Accept both `a,b` and `[a, b]`. */
const listField = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter((s) => s !== ''));

/** The fields, without cross-field rules (also the source of the published JSON Schema). */
export const RoutineFields = z.strictObject({
    id: z.string().regex(ROUTINE_REF, 'must look like user@COMPUTER:path/to/code (or a short path/to/code)').describe('Identity, unique: user@COMPUTER:path/to/code. A short id (path/to/code) is completed with the file’s `computer`, else this host’s user@HOST.'),
    name: z.string().trim().min(1).max(200).optional().describe('Group shown on the SCHED page (routines with the same name roll up). Default: the path part of the id.'),
    schedule: z.string().regex(SCHEDULE_NAME, 'letters, digits, . _ - (at most 64)').optional().describe('Schedule this routine belongs to; in a schedule file it must match the file’s schedule.'),
    computer: z.string().regex(COMPUTER, 'must look like user@COMPUTER').optional().describe('Computer that runs it (user@HOST). Default: the one in the id.'),
    realtime: z.boolean().optional().describe('Long-running: kept alive, restarted when it dies or goes silent. Takes no timing.'),
    external: z.boolean().optional().describe('Started by nobody: it reports over the API. Needs no command.'),
    command: z.string().min(1, 'must not be empty').max(4096).optional().describe('Program to run (required unless external).'),
    args: z.array(z.string().max(65536)).max(1000).optional().describe('Arguments. Secret-looking values (--password=…, --api-key …) are masked in every output.'),
    cwd: z.string().min(1).max(4096).refine(isAbsolute, 'must be an absolute path').optional().describe('Working directory. In a schedule file a relative path is relative to the file’s directory, and without one a routine of this host runs in the file’s directory.'),
    env: z.record(z.string().regex(ENV_NAME, 'environment variable names are letters, digits and _'), z.string().max(65536)).optional().describe('Environment variables. Secret-named ones (TOKEN, API_KEY, …) are masked in every output.'),
    runtimes: listField.optional().describe('Timing: daily start times HH:MM in tz, a list or "07:00,19:30".'),
    cron: z.string().optional().describe('Timing: five-field cron expression (minute hour day-of-month month day-of-week) in tz.'),
    every: durationField.optional().describe('Timing: interval counted from the end of the previous run, e.g. 30m, 1h30m.'),
    at: z.string().optional().describe('Timing: once, at an ISO 8601 time (without an offset: in tz).'),
    in: durationField.optional().describe('Timing: once, this long after the definition is saved.'),
    tz: z.string().refine(isValidTimeZone, { error: (iss) => `unknown IANA time zone ${JSON.stringify(iss.input)} (e.g. Europe/Berlin, UTC)` }).optional().describe('IANA time zone of the timing. Default: this machine’s.'),
    after: listField.optional().describe('Dependencies: ids (full or short) of routines of the same schedule that must complete first.'),
    retry: z.union([z.literal('none'), z.strictObject({ every: durationField, for: durationField })]).optional().describe('Retry a failed run every EVERY for up to FOR, or "none". Default: none, one-shots (at/in) 60s for 1h.'),
    misfire: z.enum(['skip', 'once', 'all']).optional().describe('Runs missed during downtime or sleep: skip them, run once (default) or run all.'),
    overlap: z.enum(['skip', 'queue-one', 'allow']).optional().describe('When the previous run is still going: skip (default), queue-one or allow.'),
    timeout: durationField.optional().describe('Stop a run that takes longer than this.'),
    heartbeat: durationField.optional().describe('Realtime only: restart when silent for longer than this.'),
    grace: durationField.optional().describe('Realtime: startup grace before silence counts (at most 5m; default 45s).'),
    tolerance: durationField.optional().describe('Batch: DELAYED when not started this long after due (default 5m).'),
    log_cap: sizeField.optional().describe('Per-stream log cap, bytes or e.g. 64MiB (at least 4KiB; default 64MiB).'),
    outputs: z.array(z.string().min(1)).max(100).optional().describe('Promised outputs (paths or globs).'),
    revision: z.string().regex(/^[0-9a-fA-F]{4,64}$/, 'a commit sha: 4 to 64 hex digits, e.g. 3f2a9c1 (a branch or tag moves; pin the commit it names)').optional().describe('Git commit (sha, full or abbreviated) the working tree must be at, clean.'),
    backend: z.enum(['local', 'slurm']).optional().describe('Backend that runs it: local (default) or slurm (submitted with sbatch to the cluster this machine’s Slurm commands talk to).'),
    slurm: SlurmOptionsSchema.optional(),
});

/**
 * The cross-field rules. They run even when a field failed (`when`), so that one bad duration does
 * not hide a second timing mode or a bad cron: a field that failed holds no usable value here, so
 * every check looks at the type it needs.
 */
export const RoutineInputSchema = RoutineFields.superRefine(
  (r, ctx) => {
    const modes = (['runtimes', 'cron', 'every', 'at', 'in'] as const).filter((k) => r[k] !== undefined);
    if (r.realtime) {
      for (const m of modes) ctx.addIssue({ code: 'custom', path: [m], message: 'realtime routines run continuously and take no timing' });
    } else if (modes.length === 0) {
      ctx.addIssue({ code: 'custom', path: [], message: 'a batch routine needs exactly one timing: runtimes, cron, every, at or in' });
    } else if (modes.length > 1) {
      ctx.addIssue({ code: 'custom', path: [modes[1]!], message: `only one timing mode allowed, got ${modes.join(' and ')}` });
    }
    if (!r.external && r.command === undefined) ctx.addIssue({ code: 'custom', path: ['command'], message: 'required (only external routines have no command)' });
    if (typeof r.cron === 'string') {
      const why = validateCron(r.cron);
      if (why) ctx.addIssue({ code: 'custom', path: ['cron'], message: why });
    }
    if (Array.isArray(r.runtimes)) {
      try {
        parseRuntimes(r.runtimes);
      } catch (err) {
        ctx.addIssue({ code: 'custom', path: ['runtimes'], message: (err as Error).message });
      }
    }
    if (typeof r.at === 'string') {
      try {
        parseAt(r.at, typeof r.tz === 'string' && isValidTimeZone(r.tz) ? r.tz : machineTimeZone());
      } catch (err) {
        ctx.addIssue({ code: 'custom', path: ['at'], message: (err as Error).message });
      }
    }
    // Startup grace: how long after a (re)start heartbeat silence does not count yet.
    if (typeof r.grace === 'number' && r.grace > MAX_GRACE_MS) ctx.addIssue({ code: 'custom', path: ['grace'], message: 'startup grace is at most 5m: it is how long after a start heartbeat silence does not count yet (a slow start needs a longer heartbeat)' });
    if (!r.realtime && r.grace !== undefined) ctx.addIssue({ code: 'custom', path: ['grace'], message: 'startup grace is for realtime routines (how long after a start heartbeat silence does not count); a late batch run is governed by tolerance' });
    if (!r.realtime && r.heartbeat !== undefined) ctx.addIssue({ code: 'custom', path: ['heartbeat'], message: 'only realtime routines heartbeat' });
    if (Array.isArray(r.after) && r.after.includes(r.id)) ctx.addIssue({ code: 'custom', path: ['after'], message: 'a routine cannot depend on itself' });
    if (r.slurm !== undefined && r.backend !== 'slurm') ctx.addIssue({ code: 'custom', path: ['slurm'], message: 'slurm options need backend: slurm' });
    if (r.external && r.backend === 'slurm') ctx.addIssue({ code: 'custom', path: ['backend'], message: 'an external routine is started by nobody: it runs on no backend' });
  },
  { when: (payload) => typeof payload.value === 'object' && payload.value !== null && !Array.isArray(payload.value) },
);

export type RoutineInput = z.input<typeof RoutineInputSchema>;
type ParsedRoutine = z.output<typeof RoutineInputSchema>;

export const ScheduleFileSchema = z.strictObject({
  schedule: z.string().regex(SCHEDULE_NAME, 'letters, digits, . _ - (at most 64)').describe('Schedule name. The file is the whole schedule: its routines missing from the file are removed on import.'),
  computer: z.string().regex(COMPUTER, 'must look like user@COMPUTER').optional().describe('Completes the short ids of this file (`etl/download` → `user@COMPUTER:etl/download`). Default: this host’s user@HOST.'),
  mode: z.enum(['active', 'observe']).optional().describe('active: commands are sent; observe: status is tracked, nothing is started. Omitted: unchanged (new schedules are active).'),
  max_parallel: z.number().int().positive().max(10_000).optional().describe('At most this many runs of the schedule at once.'),
  routines: z.array(z.unknown()).max(100_000).describe('The routines of this schedule.'),
});

export function zodIssues(error: z.ZodError, prefix: (string | number)[] = []): Issue[] {
  return flatIssues(error.issues, prefix);
}

/**
 * Issues in words, each with its field. A union that failed says nothing by itself ("Invalid
 * input"): the branch whose shape the value had (an object given for `retry: none | {every, for}`)
 * says what is wrong inside it (`retry.for: duration must be positive`).
 */
function flatIssues(issues: readonly z.core.$ZodIssue[], prefix: (string | number)[]): Issue[] {
  return issues.flatMap((i): Issue[] => {
    const at = [...prefix, ...i.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
    const path = at.map(String).join('.');
    if (i.code === 'unrecognized_keys') return [{ path, message: `unknown field${i.keys.length > 1 ? 's' : ''} ${i.keys.join(', ')}` }];
    if (i.code === 'invalid_union' && i.errors.length) {
      const shaped = i.errors.filter((branch) => branch.some((b) => (b.code !== 'invalid_type' && b.code !== 'invalid_value') || b.path.length > 0));
      if (shaped.length === 1) return flatIssues(shaped[0]!, at);
      if (i.message === 'Invalid input') return [{ path, message: unionHint(i.errors) }];
    }
    return [{ path, message: i.message }];
  });
}

/** `must be "none" or an object` from the branches' expectations. */
function unionHint(branches: readonly (readonly z.core.$ZodIssue[])[]): string {
  const wants = branches.flatMap((b) =>
    b.filter((x) => x.path.length === 0).map((x) => (x.code === 'invalid_type' ? `a${/^[aeiou]/.test(x.expected) ? 'n' : ''} ${x.expected}` : x.code === 'invalid_value' ? x.values.map((v) => JSON.stringify(v)).join(' or ') : null)),
  );
  const list = [...new Set(wants.filter((w): w is string => w !== null))];
  return list.length ? `must be ${list.join(' or ')}` : 'is not valid here';
}

export interface NormalizeContext {
  now: number;
  /** What completes short ids (`reports/parse` → `user@host:reports/parse`); default: this host. */
  localComputer?: string;
}

export { localComputer };

/** `reports/daily` → `me@host:reports/daily`; full ids pass through. */
export function expandRoutineId(id: string, computer = localComputer()): string {
  return ROUTINE_ID.test(id) ? id : `${computer}:${id}`;
}

/** Validate one routine input; throws TendError INVALID listing every issue with its path. */
export function parseRoutine(input: unknown, ctx: NormalizeContext, pathPrefix: (string | number)[] = []): RoutineDef {
  const parsed = RoutineInputSchema.safeParse(input);
  if (!parsed.success) throw invalid(zodIssues(parsed.error, pathPrefix));
  return normalize(parsed.data, ctx);
}

function normalize(parsed: ParsedRoutine, ctx: NormalizeContext): RoutineDef {
  const complete = (id: string) => expandRoutineId(id, ctx.localComputer ?? localComputer());
  const r = { ...parsed, id: complete(parsed.id), after: parsed.after?.map(complete) };
  const tz = r.tz ?? machineTimeZone();
  const computer = r.computer ?? r.id.slice(0, r.id.indexOf(':'));
  const path = r.id.slice(r.id.indexOf(':') + 1);
  let timing: Timing | null = null;
  if (r.runtimes !== undefined) timing = { mode: 'runtimes', runtimes: parseRuntimes(r.runtimes) };
  else if (r.cron !== undefined) timing = { mode: 'cron', cron: r.cron.trim() };
  else if (r.every !== undefined) timing = { mode: 'every', everyMs: r.every };
  else if (r.at !== undefined) timing = { mode: 'at', at: new Date(parseAt(r.at, tz)).toISOString() };
  else if (r.in !== undefined) timing = { mode: 'at', at: resolveIn(`${r.in}ms`, ctx.now) };
  const oneShot = timing?.mode === 'at';
  const retry =
    r.retry === undefined
      ? oneShot ? { ...DEFAULTS.oneShotRetry } : { ...DEFAULTS.noRetry }
      : r.retry === 'none' ? { ...DEFAULTS.noRetry } : { delayMs: r.retry.every, windowMs: r.retry.for };
  return {
    id: r.id,
    name: r.name ?? path,
    schedule: r.schedule ?? DEFAULTS.schedule,
    computer,
    kind: r.realtime ? 'realtime' : 'batch',
    external: r.external ?? false,
    command: r.command ?? '',
    args: r.args ?? [],
    cwd: r.cwd ?? null,
    env: r.env ?? {},
    timing,
    tz,
    dependencies: [...new Set(r.after ?? [])],
    retry,
    misfire: r.misfire ?? 'once',
    overlap: r.overlap ?? 'skip',
    timeoutMs: r.timeout ?? null,
    heartbeatMs: r.heartbeat ?? null,
    graceMs: r.grace ?? DEFAULTS.graceMs,
    toleranceMs: r.tolerance ?? DEFAULTS.toleranceMs,
    logCapBytes: r.log_cap ?? DEFAULTS.logCapBytes,
    outputs: r.outputs ?? [],
    revision: r.revision ?? null,
    backend: r.backend ?? 'local',
    ...(r.backend === 'slurm' ? { slurm: r.slurm ?? {} } : {}),
  };
}

/** The inverse of normalize, for `edit`, export and the editor: only non-default fields. */
export function toInput(def: RoutineDef): RoutineInput {
  const out: Record<string, unknown> = { id: def.id };
  const path = def.id.slice(def.id.indexOf(':') + 1);
  if (def.name !== path) out.name = def.name;
  if (def.schedule !== DEFAULTS.schedule) out.schedule = def.schedule;
  if (def.computer !== def.id.slice(0, def.id.indexOf(':'))) out.computer = def.computer;
  if (def.kind === 'realtime') out.realtime = true;
  if (def.external) out.external = true;
  if (def.command) out.command = def.command;
  if (def.args.length) out.args = def.args;
  if (def.cwd) out.cwd = def.cwd;
  if (Object.keys(def.env).length) out.env = def.env;
  const t = def.timing;
  if (t?.mode === 'runtimes') out.runtimes = t.runtimes;
  else if (t?.mode === 'cron') out.cron = t.cron;
  else if (t?.mode === 'every') out.every = fmt(t.everyMs);
  else if (t?.mode === 'at') out.at = t.at;
  out.tz = def.tz;
  if (def.dependencies.length) out.after = def.dependencies;
  const oneShot = t?.mode === 'at';
  const dflt = oneShot ? DEFAULTS.oneShotRetry : DEFAULTS.noRetry;
  if (def.retry.delayMs !== dflt.delayMs || def.retry.windowMs !== dflt.windowMs) {
    out.retry = def.retry.delayMs === 0 ? 'none' : { every: fmt(def.retry.delayMs), for: fmt(def.retry.windowMs) };
  }
  if (def.misfire !== 'once') out.misfire = def.misfire;
  if (def.overlap !== 'skip') out.overlap = def.overlap;
  if (def.timeoutMs !== null) out.timeout = fmt(def.timeoutMs);
  if (def.heartbeatMs !== null) out.heartbeat = fmt(def.heartbeatMs);
  if (def.graceMs !== DEFAULTS.graceMs) out.grace = fmt(def.graceMs);
  if (def.toleranceMs !== DEFAULTS.toleranceMs) out.tolerance = fmt(def.toleranceMs);
  if (def.logCapBytes !== DEFAULTS.logCapBytes) out.log_cap = def.logCapBytes;
  if (def.outputs.length) out.outputs = def.outputs;
  if (def.revision) out.revision = def.revision;
  if (def.backend !== 'local') out.backend = def.backend;
  if (def.slurm && Object.keys(def.slurm).length > 0) out.slurm = def.slurm;
  return out as RoutineInput;
}

/** A calendar day, YYYY-MM-DD (2024-02-30 and 2024-13-45 are refused, saying why). */
export const DayField = z.string().superRefine((d, ctx) => {
  const problem = dayProblem(d);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

export { decimalInt } from '../../../contract/fields.js';
