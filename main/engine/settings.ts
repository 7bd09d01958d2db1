// Every TEND_* tuning knob the engine reads, in one place: read from the environment once, by
// whoever starts (the daemon, the app's host, the CLI), and handed down as a Settings object.
// Nothing below the starter reads process.env for these; tests pass Settings instead.
//
// A bad value is named at start. Two behaviours, kept per knob as they have always been:
// `refuse` stops the start (the daemon and the app do not run on a value they cannot honour);
// `warn` reports it and uses the default (a typo in a timeout must not stop the daemon or the CLI).
//
// Read elsewhere on purpose: TEND_DATA_DIR (which data dir, chosen before anything is opened),
// TEND_SQLITE_BINDING (before SQLite loads), TZ (the OS's zone, read per call as Node's own Date
// does, so the two never disagree), TEND_PROCESS_TABLE (which process table every process that
// records or compares start times uses, the daemon, the CLI, worker hosts and the wrapper alike: the
// environment is what carries it to all of them), the CLI's own flags' fallbacks (TEND_SERVER,
// TEND_TOKEN, TEND_WORKER_TOKEN) and what a job is given (TEND_RUN_DIR, TEND_RUN_ID …).
import { DEFAULT_KEEP_DAYS } from './keep-days.js';
import { DEFAULT_OPTIONS } from './scheduler/context.js';
import { DEFAULT_WEBHOOK_OPTIONS, type WebhookOptions } from './webhooks/dispatcher.js';

export interface Settings {
  /** TEND_DAEMON_INTERVAL_MS: time between passes (events such as an exit start one at once). */
  intervalMs: number;
  /** TEND_API=off: no HTTP API. */
  api: boolean;
  /** TEND_API_HOST: where the API listens (a non-loopback host must be given explicitly). */
  apiHost: string;
  /** TEND_API_PORT: the API's port; null keeps the last one (else any free one). */
  apiPort: number | null;
  /** TEND_METRICS_PUBLIC=1: GET /metrics needs no token. */
  metricsPublic: boolean;
  /** TEND_MAX_PARALLEL: jobs in flight at once on this host. */
  maxParallel: number;
  /** TEND_BATCH_SLOTS: one-off batch jobs this host runs itself (null: as many as maxParallel). */
  batchSlots: number | null;
  /** TEND_KEEP_DAYS: days of finished history kept; null keeps everything (`forever`). */
  keepDays: number | null;
  /** TEND_KILL_GRACE_MS: TERM → KILL grace when stopping jobs. */
  killGraceMs: number;
  /** TEND_COMMAND_TTL_MS: a command to a worker expires this long after it is queued. */
  commandTtlMs: number;
  /** TEND_WORKER_OFFLINE_MS: a worker not heard from for longer than this is offline. */
  workerOfflineMs: number;
  /** TEND_JOB_SHELL: the shell that runs waiters, as a command line (e.g. "/bin/bash --posix"); null: sh. */
  jobShell: string | null;
  /** TEND_SPAWNER=off: start wrappers from this process rather than through the spawn helper. */
  spawner: boolean;
  /** TEND_SLURM_BIN_DIR: where sbatch, squeue … are (null: on PATH). */
  slurmBinDir: string | null;
  /** TEND_SLURM_SHARED_FS=1: the runs dir is shared with the Slurm nodes in a way Tend cannot tell. */
  slurmSharedFs: boolean;
  /** TEND_WEBHOOK_*: delivery tuning (see docs/webhooks.md). */
  webhooks: WebhookOptions;
}

export const DEFAULT_SETTINGS: Readonly<Settings> = Object.freeze({
  intervalMs: 1000,
  api: true,
  apiHost: '127.0.0.1',
  apiPort: null,
  metricsPublic: false,
  maxParallel: DEFAULT_OPTIONS.maxParallel,
  batchSlots: null,
  keepDays: DEFAULT_KEEP_DAYS,
  killGraceMs: DEFAULT_OPTIONS.killGraceMs,
  commandTtlMs: 60_000,
  workerOfflineMs: DEFAULT_OPTIONS.workerOfflineMs,
  jobShell: null,
  spawner: true,
  slurmBinDir: null,
  slurmSharedFs: false,
  webhooks: Object.freeze({ ...DEFAULT_WEBHOOK_OPTIONS }),
});

/** The defaults with some replaced: what tests pass instead of setting the environment. */
export function settings(over: Partial<Omit<Settings, 'webhooks'>> & { webhooks?: Partial<WebhookOptions> } = {}): Settings {
  return { ...DEFAULT_SETTINGS, ...over, webhooks: { ...DEFAULT_SETTINGS.webhooks, ...over.webhooks } };
}

export interface SettingsProblem {
  /** The variable, e.g. TEND_KEEP_DAYS. */
  knob: string;
  /** Names the variable, what it must be and what it was. */
  message: string;
  /** The start is refused; otherwise the default is used. */
  refused: boolean;
}

type Bad = 'refuse' | 'warn';

interface Knob {
  /** What a good value is, for the message. */
  says: string;
  /** The value, or BAD. Plain checks: zod is not loaded just to start. */
  parse(raw: string): unknown;
  bad: Bad;
  /** Where the value goes. */
  set(s: Settings, value: unknown): void;
  /** The default, as the warning shows it. */
  fallback(s: Settings): unknown;
}

const BAD = Symbol('bad');
/** Number()'s reading of the text (so "1e3" is 1000, " 5 " is 5), as these knobs always had. */
const number = (min: number, max: number) => (raw: string) => {
  const n = Number(raw);
  return Number.isFinite(n) && n >= min && n <= max ? n : BAD;
};
const integer = (min: number, max: number) => (raw: string) => {
  const n = number(min, max)(raw);
  return typeof n === 'number' && Number.isSafeInteger(n) ? n : BAD;
};
const ms = (min: number, max: number, set: (s: Settings, v: number) => void, get: (s: Settings) => number): Knob => ({
  says: `milliseconds from ${min} to ${max}`,
  parse: integer(min, max),
  bad: 'warn',
  set: (s, v) => set(s, v as number),
  fallback: get,
});
const DAY = 24 * 3_600_000;
/** On for 1, true, yes or on (any case); anything else is off, never an error. */
const flag = (set: (s: Settings, v: boolean) => void, get: (s: Settings) => boolean): Knob => ({
  says: '1, true, yes or on',
  parse: (v) => /^(1|true|yes|on)$/i.test(v),
  bad: 'refuse',
  set: (s, v) => set(s, v as boolean),
  fallback: get,
});
/** On unless "off" (exactly); never an error. */
const onUnlessOff = (set: (s: Settings, v: boolean) => void, get: (s: Settings) => boolean): Knob => ({
  says: '"off" or unset',
  parse: (v) => v !== 'off',
  bad: 'refuse',
  set: (s, v) => set(s, v as boolean),
  fallback: get,
});
/** Any text, taken as it is. */
const text = (set: (s: Settings, v: string) => void, get: (s: Settings) => string | null): Knob => ({ says: 'text', parse: (v) => v, bad: 'refuse', set: (s, v) => set(s, v as string), fallback: get });

const webhookKnob = (key: keyof WebhookOptions, min: number, max: number): Knob => ({
  says: `an integer from ${min} to ${max}`,
  parse: integer(min, max),
  bad: 'warn',
  set: (s, v) => void (s.webhooks[key] = v as number),
  fallback: (s) => s.webhooks[key],
});

/** The knobs, by variable. Unset, empty or blank means the default. */
export const KNOBS: Record<string, Knob> = {
  TEND_DAEMON_INTERVAL_MS: {
    says: 'a number of milliseconds between 10 and 3600000',
    parse: (raw) => {
      const n = number(10, 3_600_000)(raw);
      return n === BAD ? BAD : Math.round(n as number);
    },
    bad: 'refuse',
    set: (s, v) => void (s.intervalMs = v as number),
    fallback: (s) => s.intervalMs,
  },
  TEND_API: onUnlessOff((s, v) => (s.api = v), (s) => s.api),
  TEND_API_HOST: text((s, v) => (s.apiHost = v), (s) => s.apiHost),
  TEND_API_PORT: { says: 'a port from 0 to 65535', parse: integer(0, 65_535), bad: 'refuse', set: (s, v) => void (s.apiPort = v as number), fallback: (s) => s.apiPort },
  TEND_METRICS_PUBLIC: flag((s, v) => (s.metricsPublic = v), (s) => s.metricsPublic),
  TEND_MAX_PARALLEL: { says: 'an integer from 1 to 10000', parse: integer(1, 10_000), bad: 'refuse', set: (s, v) => void (s.maxParallel = v as number), fallback: (s) => s.maxParallel },
  TEND_BATCH_SLOTS: { says: 'an integer from 0 to 10000', parse: integer(0, 10_000), bad: 'refuse', set: (s, v) => void (s.batchSlots = v as number), fallback: (s) => s.batchSlots },
  TEND_KEEP_DAYS: {
    says: 'a whole number of days from 1 to 36500, or "forever"',
    parse: (raw) => (raw.trim() === 'forever' ? null : integer(1, 36_500)(raw)),
    bad: 'refuse',
    set: (s, v) => void (s.keepDays = v as number | null),
    fallback: (s) => s.keepDays,
  },
  TEND_KILL_GRACE_MS: ms(0, DAY, (s, v) => (s.killGraceMs = v), (s) => s.killGraceMs),
  TEND_COMMAND_TTL_MS: ms(100, DAY, (s, v) => (s.commandTtlMs = v), (s) => s.commandTtlMs),
  TEND_WORKER_OFFLINE_MS: ms(100, DAY, (s, v) => (s.workerOfflineMs = v), (s) => s.workerOfflineMs),
  TEND_JOB_SHELL: text((s, v) => (s.jobShell = v.trim()), (s) => s.jobShell),
  TEND_SPAWNER: onUnlessOff((s, v) => (s.spawner = v), (s) => s.spawner),
  TEND_SLURM_BIN_DIR: text((s, v) => (s.slurmBinDir = v), (s) => s.slurmBinDir),
  TEND_SLURM_SHARED_FS: flag((s, v) => (s.slurmSharedFs = v), (s) => s.slurmSharedFs),
  TEND_WEBHOOK_QUEUE_MAX: webhookKnob('queueMax', 1, 1_000_000),
  TEND_WEBHOOK_MAX_ATTEMPTS: webhookKnob('maxAttempts', 1, 1000),
  TEND_WEBHOOK_BACKOFF_MS: webhookKnob('backoffMs', 10, 3_600_000),
  TEND_WEBHOOK_MAX_BACKOFF_MS: webhookKnob('maxBackoffMs', 10, DAY),
  TEND_WEBHOOK_TIMEOUT_MS: webhookKnob('timeoutMs', 100, 300_000),
  TEND_WEBHOOK_POLL_MS: webhookKnob('pollMs', 10, 60_000),
};

/** Settings from the environment: every knob read once; bad values are returned as problems. */
export function readSettings(env: NodeJS.ProcessEnv): { settings: Settings; problems: SettingsProblem[] } {
  const s = settings();
  const problems: SettingsProblem[] = [];
  for (const [knob, k] of Object.entries(KNOBS)) {
    const raw = env[knob];
    if (raw === undefined || raw.trim() === '') continue;
    const value = k.parse(raw);
    if (value !== BAD) {
      k.set(s, value);
      continue;
    }
    const message = `${knob} must be ${k.says}, got ${JSON.stringify(raw)}`;
    problems.push(k.bad === 'refuse' ? { knob, message, refused: true } : { knob, message: `${message}: using ${String(k.fallback(s))}`, refused: false });
  }
  if (s.webhooks.maxBackoffMs < s.webhooks.backoffMs) s.webhooks.maxBackoffMs = s.webhooks.backoffMs;
  return { settings: s, problems };
}

/** Refused by the daemon or the app: the messages of the refused knobs, one per line. */
export class SettingsError extends Error {
  constructor(readonly problems: SettingsProblem[]) {
    super(problems.map((p) => p.message).join('\n'));
  }
}

/**
 * For the daemon and the app: the settings, or a SettingsError naming every refused knob.
 * Warnings (defaults used instead of bad values) go to `warn`.
 */
export function settingsForStart(env: NodeJS.ProcessEnv, warn: (message: string) => void): Settings {
  const { settings: s, problems } = readSettings(env);
  const refused = problems.filter((p) => p.refused);
  if (refused.length) throw new SettingsError(refused);
  for (const p of problems) warn(p.message);
  return s;
}
