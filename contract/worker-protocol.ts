// The worker protocol: what a worker host (`tend worker`, worker/remote/agent.ts) and an external
// routine (`tend report`) send the daemon, and what the daemon answers (main/engine/pool/routes.ts).
// Declared once, as the schemas both sides validate with: the server parses requests with them,
// the worker parses answers with them, and the OpenAPI document describes the routes with them.
// A worker token reaches only these routes, and only for its own computer.
import { z } from 'zod';
import { decimalInt } from './fields.js';

export const COMPUTER = /^[^@\s:]+@[^@\s:]+$/;
/** The longest long poll a worker may ask for. */
export const MAX_WAIT_MS = 30_000;

export { WORKER_PATHS } from './worker-paths.js';

/** What every worker request says about the worker (the daemon's `workers.list`). */
const WorkerInfo = {
  computer: z.string().regex(COMPUTER, 'must look like user@COMPUTER').optional(),
  version: z.string().max(64).optional(),
  slots: decimalInt(0, 10_000).optional(),
  running: decimalInt(0, 100_000).optional(),
};

// ---- requests ----

/** GET commands: the query of a long poll (`wait` ms at most). */
export const CommandsQuery = z.strictObject({ ...WorkerInfo, wait: decimalInt(0, MAX_WAIT_MS).optional() });
/** POST claim: one-off batch jobs for `slots` free slots. */
export const ClaimBody = z.strictObject({ ...WorkerInfo, slots: z.number().int().min(1).max(1000), wait: z.number().int().min(0).max(MAX_WAIT_MS).optional() });
/** One run's or job's news, as the worker saw it. */
export const WorkerReport = z.strictObject({
  kind: z.enum(['run', 'job']),
  id: z.string().min(1).max(100),
  state: z.enum(['running', 'done', 'refused']),
  pid: z.number().int().positive().optional(),
  exitCode: z.number().int().min(-1).max(255).nullable().optional(),
  signal: z.string().max(32).nullable().optional(),
  reason: z.string().max(2000).nullable().optional(),
  runDir: z.string().max(4096).optional(),
  startedAt: z.number().int().nonnegative().optional(),
  endedAt: z.number().int().nonnegative().optional(),
  heartbeatAt: z.number().int().nonnegative().optional(),
});
export const ReportsBody = z.strictObject({ ...WorkerInfo, reports: z.array(WorkerReport).max(1000) });
export const EXTERNAL_ACTIONS = ['start', 'heartbeat', 'complete', 'fail', 'log'] as const;
export const ExternalParams = z.strictObject({ id: z.string().min(1).max(500), action: z.enum(EXTERNAL_ACTIONS) });
export const ExternalBody = z.strictObject({
  computer: WorkerInfo.computer,
  runId: z.string().regex(/^[\w.-]{1,64}$/, 'at most 64 letters, digits, . _ -').optional(),
  exitCode: z.number().int().min(0).max(255).optional(),
  message: z.string().max(65_536).optional(),
});

// ---- answers ----

const SlurmOptions = z.object({ partition: z.string().optional(), time: z.string().optional(), cpus: z.number().optional(), memory: z.string().optional(), extra: z.array(z.string()).optional() });

/** What to run, as the daemon sends it (the engine's JobSpec; the worker picks its own runDir). */
export const WireSpec = z.object({
  runId: z.string(),
  kind: z.enum(['run', 'job']),
  routineId: z.string().nullable(),
  jobId: z.number().int().nullable(),
  attempt: z.number().int(),
  command: z.string(),
  args: z.array(z.string()),
  cwd: z.string().nullable(),
  env: z.record(z.string(), z.string()),
  scheduledAt: z.number().int(),
  runDir: z.string(),
  logCapBytes: z.number(),
  outputs: z.array(z.string()),
  revision: z.string().nullable(),
  maskedArgs: z.array(z.string()),
  slurm: SlurmOptions.nullable().optional(),
});

/** A command's payload by its kind: start a run, or cancel one (TERM, KILL after `graceMs`). */
export const StartPayload = z.object({ spec: WireSpec, tendVersion: z.string().optional() });
export const CancelPayload = z.object({ runId: z.string(), kind: z.enum(['run', 'job']), graceMs: z.number().int().nonnegative() });
const expiresAt = z.number().int().describe('epoch milliseconds');
export const Command = z.discriminatedUnion('kind', [
  z.object({ id: z.number().int(), kind: z.literal('start'), payload: StartPayload, expiresAt }),
  z.object({ id: z.number().int(), kind: z.literal('cancel'), payload: CancelPayload, expiresAt }),
]);
export const CommandsResult = z.object({ commands: z.array(Command) });
export const ClaimResult = z.object({ jobs: z.array(z.object({ id: z.number().int(), spec: WireSpec })) });
export const ReportsResult = z.object({ accepted: z.number().int(), refused: z.array(z.object({ id: z.string(), reason: z.string() })) });
export const ExternalResult = z.object({ runId: z.string().nullable(), status: z.string().nullable() });

export type WorkerReport = z.input<typeof WorkerReport>;
export type Command = z.output<typeof Command>;
export type StartPayload = z.input<typeof StartPayload>;
export type CancelPayload = z.input<typeof CancelPayload>;
export type ClaimResult = z.output<typeof ClaimResult>;
export type ExternalResult = z.output<typeof ExternalResult>;
