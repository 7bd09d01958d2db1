// The local backend: jobs are processes on this machine, each with a job directory (jobdir.ts)
// and a detached wrapper (wrapper.ts). Handles are JSON (handle.ts); poll and fetch read only
// the directory and /proc (settle.ts), so any process can settle any job.
import { join } from 'node:path';
import type { Backend, Handle, Health, JobSpec, Outcome, PollState } from '../../main/engine/backend.js';
import { TendError } from '../../main/engine/errors.js';
import { cancelLocalJob } from './cancel.js';
import { processProvider } from '../jobdir/proc.js';
import { localHealth, DEFAULT_MIN_FREE_BYTES } from './health.js';
import { handleFromRunDir, parseHandle, toHandle, type LocalHandle } from './handle.js';
import { readHeartbeat, readManifest, wasLaunched } from '../jobdir/jobdir.js';
import { followLog, tailLog, type FollowOptions, type Stream } from '../jobdir/logs.js';
import { checkRevision } from '../jobdir/revision.js';
import { fetchLocalJob, pollLocalJob } from './settle.js';
import { submitLocalJob } from './submit.js';
import { Standbys } from './standby.js';
import { BatchWaiters } from './batch-waiters.js';
import type { WaiterTools } from './tools.js';

export interface LocalBackendOptions {
  dataDir: string;
  tendVersion: string;
  /** Nudge: a wrapper this process launched has exited, so that run can be settled now. */
  onExit?: (runId: string) => void;
  /** Grace between TERM and KILL when cancel is given none (default 10 s). */
  killGraceMs?: number;
  /** Below this much free disk in the data dir the backend is unhealthy (default 100 MiB). */
  minFreeBytes?: number;
  /** How long submit waits for the wrapper to record the routine's pid (default 10 s). */
  startTimeoutMs?: number;
  /** The waiter's shell and how it is spawned (the host's settings; default sh, through the helper). */
  tools?: WaiterTools;
  /** At most this many waiters kept between batch jobs (the host's slots; default 8). */
  batchWaiters?: number;
}

export interface LocalBackend extends Backend {
  readonly name: 'local';
  readonly dataDir: string;
  /** Newest `maxBytes` of a job's stdout or stderr. */
  tailLog(runDir: string, stream: Stream, maxBytes: number): string;
  /** New output of a job's stream as it is written, until the job is over. */
  followLog(runDir: string, stream: Stream, opts?: FollowOptions): AsyncGenerator<string>;
  /** mtime (epoch ms) of `<runDir>/heartbeat`, or null. */
  readHeartbeat(runDir: string): number | null;
  /** A handle rebuilt from a job directory alone (submit interrupted before the ledger write). */
  handleFromRunDir(runDir: string): Handle | null;
  checkRevision(cwd: string | null, revision: string): Promise<string | null>;
}

export const DEFAULT_KILL_GRACE_MS = 10_000;
/** How long a healthy answer stands before the disk is probed again. */
const HEALTHY_FOR_MS = 1000;
/**
 * How long a healthy answer may still be given while a new probe runs behind it. The probe is
 * several trips through the thread pool (mkdir, statfs, access), some milliseconds
 * on a busy machine, and a realtime restart (the micro-pass's health gate) would wait for them.
 */
const STANDS_FOR_MS = 30_000;

function localHandle(h: Handle): LocalHandle {
  const parsed = parseHandle(h);
  if (!parsed) throw new TendError('INVALID', `not a local job handle: ${JSON.stringify(h).slice(0, 200)}`);
  return parsed;
}

export function createLocalBackend(opts: LocalBackendOptions): LocalBackend {
  const killGraceMs = opts.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const minFreeBytes = opts.minFreeBytes ?? DEFAULT_MIN_FREE_BYTES;
  const startTimeoutMs = opts.startTimeoutMs ?? 10_000;
  let healthyUntil = 0;
  let standsUntil = 0;
  let probing: Promise<Health> | null = null;
  const probe = async (): Promise<Health> => {
    const h = await localHealth(opts.dataDir, minFreeBytes, opts.tools);
    const at = Date.now();
    healthyUntil = h.ok ? at + HEALTHY_FOR_MS : 0;
    standsUntil = h.ok ? at + STANDS_FOR_MS : 0;
    return h;
  };
  const standbys = new Standbys({ dataDir: opts.dataDir, tools: opts.tools, killGraceMs });
  const onExit = (runId: string) => {
    opts.onExit?.(runId);
    standbys.followedEnded(runId);
  };
  const waiters = join(opts.dataDir, 'runs', '.waiters');
  const batchWaiters = new BatchWaiters({ dataDir: opts.dataDir, tools: opts.tools, killGraceMs, max: opts.batchWaiters ?? 8, onOver: onExit, answerTimeoutMs: startTimeoutMs });

  return {
    name: 'local',
    dataDir: opts.dataDir,

    async health(): Promise<Health> {
      // Passes come back to back while work flows (every exit nudges one): a good answer is
      // kept for a moment rather than probing the disk before every launch; for a while after
      // that it is still given at once, and the probe's answer serves the next ask.
      const now = Date.now();
      if (now < healthyUntil) return { ok: true, reason: null };
      if (now < standsUntil) {
        probing ??= probe().finally(() => (probing = null));
        return { ok: true, reason: null };
      }
      return probing ?? probe();
    },

    async submit(spec: JobSpec): Promise<Handle> {
      // Idempotent per run: a resubmission after a crash between launch and the ledger write
      // adopts the job its directory records instead of launching it twice. A directory left
      // half-written before any wrapper started is launched (the wrapper's claim keeps it single).
      if (wasLaunched(spec.runDir)) {
        const existing = handleFromRunDir(spec.runDir);
        if (existing) return toHandle(existing);
      }
      const handle = await submitLocalJob(spec, { tendVersion: opts.tendVersion, onExit, startTimeoutMs, tools: opts.tools, killGraceMs, standbys, batchWaiters, waiters });
      if (spec.realtime) standbys.prepareAfter(spec);
      return toHandle(handle);
    },

    async poll(handles: Handle[]): Promise<PollState[]> {
      const table = processProvider().table();
      return handles.map((h) => {
        const parsed = parseHandle(h);
        return parsed ? pollLocalJob(parsed, table) : { state: 'lost', reason: 'not a local job handle' };
      });
    },

    async fetch(handle: Handle): Promise<Outcome> {
      return fetchLocalJob(localHandle(handle));
    },

    cancel(handle: Handle, graceMs: number): Promise<void> {
      const grace = Number.isFinite(graceMs) && graceMs >= 0 ? graceMs : killGraceMs;
      const h = localHandle(handle);
      standbys.cancelled(h.runId);
      return cancelLocalJob(h, grace);
    },

    tailLog,
    followLog,
    readManifest,
    readHeartbeat,
    handleFromRunDir(runDir: string): Handle | null {
      const h = handleFromRunDir(runDir);
      return h ? toHandle(h) : null;
    },
    checkRevision,
  };
}
