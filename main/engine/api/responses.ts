// What every route answers, as schemas: the OpenAPI document is generated from these (and from the
// input schemas the server validates with). test/api/openapi-types.test.ts checks at compile time
// that each method's return type is a value its schema describes; test/api/openapi.test.ts checks
// real answers against the generated document. Objects list the fields a client may rely on;
// fields added later do not make an answer invalid.
import { z } from 'zod';
import { EVENT_TYPES } from '../events/catalogue.js';
import { WEBHOOK_EVENTS } from '../webhooks/store.js';
import type { Channel } from '../../../contract/routes.js';

const iso = z.string().describe('ISO 8601 instant');
const ms = z.number().int().describe('epoch milliseconds');
const nullable = <T extends z.ZodType>(t: T) => t.nullable();

const RUN_STATUS = z.enum(['PENDING', 'DELAYED', 'STARTING', 'RUNNING', 'COMPLETED', 'ERROR', 'CANCELLED', 'EXITED', 'STOPPED']);
const JOB_STATUS = z.enum(['WAITING', 'PENDING', 'FETCHED', 'RUNNING', 'COMPLETED', 'ERROR', 'CANCEL']);
const TRIGGER_STATE = z.enum(['scheduled', 'paused', 'fired', 'failed', 'cancelled']);
const KIND = z.enum(['batch', 'realtime']);
const DELIVERY_STATE = z.enum(['queued', 'delivered', 'failed', 'dropped']);

/** `{ok: false, error}`: how every failure answers (the status says which kind). */
export const ErrorEnvelope = z.object({
  ok: z.literal(false),
  error: z.object({
    code: z.string().describe('INVALID, BAD_REQUEST, UNAUTHORIZED, FORBIDDEN, NOT_FOUND, CONFLICT, REFUSED, UNAVAILABLE or INTERNAL'),
    message: z.string(),
    issues: z.array(z.object({ path: z.string().describe('dotted path of the offending field; empty for the whole input'), message: z.string() })).optional(),
  }),
});

/** What fastify itself answers before any route runs: headers over Node's limit (431), or while the server is closing (503). */
export const FrameworkBody = z.object({ error: z.string(), message: z.string(), statusCode: z.number().int() });

export const ok = <T extends z.ZodType>(value: T) => z.object({ ok: z.literal(true), value });

export const RunSummarySchema = z.object({
  id: z.string(),
  status: RUN_STATUS,
  attempt: z.number().int(),
  scheduledAt: iso,
  startedAt: nullable(iso),
  endedAt: nullable(iso),
  durationMs: nullable(z.number()),
  exitCode: nullable(z.number().int()),
  signal: nullable(z.string()),
  reason: nullable(z.string()),
  heartbeatAt: nullable(iso),
  manual: z.boolean(),
  runDir: nullable(z.string()),
});

const RoutineSummarySchema = z.object({
  id: z.string(),
  name: z.string(),
  schedule: z.string(),
  computer: z.string(),
  kind: KIND,
  external: z.boolean(),
  observeOnly: z.boolean(),
  trigger: nullable(TRIGGER_STATE),
  nextRun: nullable(iso),
  retry: nullable(z.object({ at: iso, attempt: z.number().int(), maxAttempts: z.number().int() })).describe("a failed run's queued retry: when, and which attempt of at most how many"),
  today: nullable(RUN_STATUS),
  lastRun: nullable(RunSummarySchema),
  dependencies: z.array(z.string()),
});

const TimingSchema = z.union([
  z.object({ mode: z.literal('runtimes'), runtimes: z.array(z.string()) }),
  z.object({ mode: z.literal('cron'), cron: z.string() }),
  z.object({ mode: z.literal('every'), everyMs: z.number() }),
  z.object({ mode: z.literal('at'), at: iso }),
]);

const SlurmSchema = z.object({ partition: z.string().optional(), time: z.string().optional(), cpus: z.number().optional(), memory: z.string().optional(), extra: z.array(z.string()).optional() });

export const RoutineDefSchema = z.object({
  id: z.string(),
  name: z.string(),
  schedule: z.string(),
  computer: z.string(),
  kind: KIND,
  external: z.boolean(),
  command: z.string(),
  args: z.array(z.string()).describe('secret-looking values masked'),
  cwd: nullable(z.string()),
  env: z.record(z.string(), z.string()).describe('secret-looking values masked'),
  timing: nullable(TimingSchema),
  tz: z.string(),
  dependencies: z.array(z.string()),
  retry: z.object({ delayMs: z.number(), windowMs: z.number() }),
  misfire: z.enum(['skip', 'once', 'all']),
  overlap: z.enum(['skip', 'queue-one', 'allow']),
  timeoutMs: nullable(z.number()),
  heartbeatMs: nullable(z.number()),
  graceMs: z.number(),
  toleranceMs: z.number(),
  logCapBytes: z.number(),
  outputs: z.array(z.string()),
  revision: nullable(z.string()),
  backend: z.string(),
  slurm: nullable(SlurmSchema).optional(),
});

const TriggerRowSchema = z.object({
  routineId: z.string(),
  state: TRIGGER_STATE,
  nextRunAt: nullable(ms),
  firstDueAt: nullable(ms),
  lastFiredAt: nullable(ms),
  attempts: z.number().int(),
  lastError: nullable(z.string()),
  lastErrorAt: nullable(ms),
  failCount: z.number().int(),
});

const RoutineDetailSchema = RoutineSummarySchema.extend({
  definition: RoutineDefSchema,
  triggerState: nullable(TriggerRowSchema),
  nextRuns: z.array(iso),
  history: z.array(RunSummarySchema),
  dependents: z.array(z.string()),
});

export const JobRowSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  command: z.string(),
  args: z.array(z.string()),
  cwd: nullable(z.string()),
  env: z.record(z.string(), z.string()),
  computer: nullable(z.string()),
  status: JOB_STATUS,
  reason: nullable(z.string()),
  exitCode: nullable(z.number().int()),
  signal: nullable(z.string()),
  runDir: nullable(z.string()),
  backend: nullable(z.string()),
  slurm: nullable(SlurmSchema).optional(),
  dependencies: z.array(z.number().int()),
  createdAt: ms,
  startedAt: nullable(ms),
  endedAt: nullable(ms),
});

const ProcessIdentity = z.object({ pid: nullable(z.number().int()), startTime: nullable(z.number()) });
/** The job directory's manifest.json (local backend), secrets never in it. */
const ManifestSchema = z.object({
  manifestVersion: z.literal(1),
  backend: z.literal('local'),
  tendVersion: z.string(),
  runId: z.string(),
  kind: z.enum(['run', 'job']),
  routineId: nullable(z.string()),
  jobId: nullable(z.number().int()),
  attempt: z.number().int(),
  command: z.string(),
  args: z.array(z.string()).describe('masked'),
  cwd: z.string(),
  envNames: z.array(z.string()),
  outputs: z.array(z.string()),
  revision: nullable(z.string()),
  logCapBytes: z.number(),
  scheduledAt: ms,
  createdAt: ms,
  bootId: nullable(z.string()),
  wrapper: ProcessIdentity,
  routine: ProcessIdentity,
  startedAt: nullable(ms),
});

const RunOfDay = RunSummarySchema.extend({ routineId: nullable(z.string()), kind: z.string() });

const DeliveryViewSchema = z.object({
  id: z.number().int(),
  webhookId: z.number().int(),
  url: z.string().describe('credentials and query redacted'),
  event: z.enum(WEBHOOK_EVENTS),
  routineId: nullable(z.string()),
  runId: nullable(z.string()),
  state: DELIVERY_STATE,
  attempts: z.number().int(),
  nextAttemptAt: nullable(iso),
  statusCode: nullable(z.number().int()),
  error: nullable(z.string()),
  createdAt: iso,
  updatedAt: iso,
});
const DeliveryCounts = z.object({ queued: z.number().int(), delivered: z.number().int(), failed: z.number().int(), dropped: z.number().int() });

export const WebhookViewSchema = z.object({
  id: z.number().int(),
  url: z.string().describe('credentials and query redacted'),
  routineId: nullable(z.string()),
  events: z.array(z.enum(WEBHOOK_EVENTS)),
  signed: z.boolean(),
  createdAt: iso,
});
export const DeliveryLogSchema = z.object({ counts: DeliveryCounts, deliveries: z.array(DeliveryViewSchema) });

const DaemonStatusSchema = z.object({
  dataDir: z.string(),
  healthy: z.boolean(),
  owner: nullable(z.object({ pid: z.number().int(), kind: z.string(), alive: z.boolean(), startedAt: iso })),
  heartbeat: z.object({ last: nullable(iso), ageMs: nullable(z.number()), fresh: z.boolean() }),
  version: nullable(z.string()),
  api: nullable(z.object({ url: z.string() })),
  runs: z.record(z.string(), z.number().int()).describe("today's runs by status"),
  jobs: z.record(z.string(), z.number().int()).describe('batch jobs by status'),
  inFlight: z.number().int(),
  nextDue: nullable(z.object({ routineId: z.string(), at: iso })),
  recentFailures: z.array(z.object({ routineId: z.string(), runId: z.string(), at: iso, reason: nullable(z.string()) })),
  lastPass: nullable(z.object({ durationMs: z.number(), fired: z.number().int(), submitted: z.number().int(), settled: z.number().int(), faults: z.number().int() })),
  pausedBackends: z.record(z.string(), z.string()).describe('backends the daemon holds paused, with why (their work waits; nothing fails)'),
  history: nullable(
    z.object({
      keepDays: nullable(z.number().int()),
      lastSweep: nullable(z.object({ at: iso, runs: z.number().int(), jobs: z.number().int(), events: z.number().int(), dirs: z.number().int() })),
    }),
  ),
  webhooks: nullable(z.object({ receivers: z.number().int(), counts: DeliveryCounts, recent: z.array(DeliveryViewSchema) })),
});

export const EventRowSchema = z.object({
  id: z.number().int(),
  at: ms,
  // A string, not an enum: the history may hold a type an older Tend wrote and this one retired.
  type: z.string().describe(`noun:verb, one of the event catalogue's: ${EVENT_TYPES.join(', ')}`),
  level: z.enum(['info', 'warn', 'error']),
  routineId: nullable(z.string()),
  runId: nullable(z.string()),
  jobId: nullable(z.number().int()),
  message: z.string(),
  data: nullable(z.record(z.string(), z.unknown())),
});

/** The `value` of each contract channel's `{ok: true, value}`. */
export const RESULTS = {
  'routines.list': z.array(RoutineSummarySchema),
  'routines.show': RoutineDetailSchema,
  'routines.create': RoutineDefSchema,
  'routines.edit': RoutineDefSchema,
  'routines.remove': z.object({ id: z.string(), removed: z.boolean() }),
  'routines.pause': TriggerRowSchema,
  'routines.resume': TriggerRowSchema,
  'routines.clear': TriggerRowSchema,
  'routines.run': RunSummarySchema,
  'routines.restart': z.object({ stopped: z.array(RunSummarySchema), started: RunSummarySchema }),
  'routines.stop': z.array(RunSummarySchema),
  'timing.preview': z.array(iso),
  'schedules.list': z.array(z.object({ name: z.string(), mode: z.enum(['active', 'observe']), maxParallel: nullable(z.number().int()) })),
  'schedules.setMode': z.object({ name: z.string(), mode: z.enum(['active', 'observe']) }),
  'jobs.list': z.array(JobRowSchema),
  'jobs.show': JobRowSchema,
  'jobs.post': JobRowSchema,
  'jobs.cancel': JobRowSchema,
  'runs.list': z.array(RunOfDay),
  'runs.show': RunOfDay.extend({ manifest: ManifestSchema.nullable().describe('null before the run started, or on another backend') }),
  'runs.log': z.object({ runId: z.string(), stream: z.enum(['stdout', 'stderr']), text: z.string() }),
  'workers.list': z.array(
    z.object({ computer: z.string(), version: nullable(z.string()), slots: nullable(z.number().int()), running: nullable(z.number().int()), lastSeen: nullable(ms), registeredAt: nullable(ms) }),
  ),
  'workers.forget': z.object({ computer: z.string(), runs: z.number().int(), failedJobs: z.number().int(), requeuedJobs: z.number().int(), expiredCommands: z.number().int() }),
  'daemon.status': DaemonStatusSchema,
  'daemon.doctor': z.array(z.object({ id: z.string(), severity: z.enum(['ok', 'info', 'warn', 'error']), message: z.string(), action: nullable(z.string()) })),
  'events.recent': z.array(EventRowSchema),
} satisfies Record<Channel, z.ZodType>;

export const HealthSchema = z.object({ status: z.literal('ok'), pid: z.number().int() });
