// poll and fetch for Slurm jobs. A poll asks about all in-flight jobs at once: `scontrol ping`
// (answers at once when the controller is down, where squeue would retry for ~20 s), one squeue,
// and only for jobs that need it one sacct (or one `scontrol show job` when accounting is off).
// What it learnt is kept for fetch, so settling a batch of finished jobs asks Slurm nothing more.
// The run dir's sentinel gives the exit code; Slurm's state gives the reason when the job was
// ended by Slurm (time limit, scancel, node failure, memory, preemption).
import { statSync } from 'node:fs';
import { constants } from 'node:os';
import type { Outcome, PollState } from '../../main/engine/backend.js';
import { TendError } from '../../main/engine/errors.js';
import { jobPath, readCancelRecord, readHeartbeat, readPidRecord, readSentinel, type Sentinel } from '../jobdir/jobdir.js';
import { missingOutputs } from '../jobdir/outputs.js';
import { capLogs } from '../jobdir/logs.js';
import { describeFailure, type SlurmRunner } from './commands.js';
import type { SlurmHandle } from './handle.js';
import { EXIT_BAD_ARGV, EXIT_DIR_NOT_VISIBLE, EXIT_NO_SENTINEL, readSlurmManifest } from './jobdir.js';
import { pick, sacctJobs, scontrolJobs, squeueJobs, SlurmUnavailable, type JobInfo } from './query.js';
import { phaseOf, STATE_MEANING } from './states.js';

export interface TrackerOptions {
  runner: SlurmRunner;
  cluster: () => Promise<string>;
  /** After Slurm says a job is over, how long to wait for its sentinel to show (NFS caches). */
  sentinelGraceMs?: number;
  /** After sacct said accounting is off, how long to use scontrol instead before trying again. */
  accountingRetryMs?: number;
  now?: () => number;
}

const CACHE_TTL_MS = 10 * 60_000;

/**
 * When the routine started: pid.json's mtime (written by run.sh as it starts the routine, ms), else
 * Slurm's StartTime, which has whole seconds and so may read up to a second early: never before
 * the job was submitted.
 */
export function routineStartedAt(h: SlurmHandle, info: JobInfo | null): number | null {
  try {
    return Math.round(statSync(jobPath(h.runDir, 'pids')).mtimeMs);
  } catch {
    if (!info?.startAt) return null;
    return h.submittedAt !== null ? Math.max(info.startAt, h.submittedAt) : info.startAt;
  }
}

function signalName(n: number): string {
  for (const [name, num] of Object.entries(constants.signals)) if (num === n) return name.replace(/^SIG/, '');
  return String(n);
}

export class SlurmTracker {
  private readonly cache = new Map<string, { info: JobInfo; at: number }>();
  private accountingOffUntil = 0;
  private readonly now: () => number;

  constructor(private readonly o: TrackerOptions) {
    this.now = o.now ?? Date.now;
  }

  /** Calls made to each command (tests pin the batching with it). */
  readonly calls = { ping: 0, squeue: 0, sacct: 0, scontrol: 0 };

  private async ping(): Promise<void> {
    this.calls.ping++;
    const r = await this.o.runner.run('scontrol', ['ping']);
    if (r.failure) throw new SlurmUnavailable(r.failure);
    if (!/\bis UP\b/.test(r.stdout)) throw new SlurmUnavailable(`the Slurm controller does not answer (${(r.stdout.trim().split('\n')[0] ?? '') || describeFailure('scontrol', r)})`);
  }

  /** What Slurm knows about these jobs: one squeue, then one sacct (or scontrol) if needed. */
  async lookup(handles: SlurmHandle[], needExit: (h: SlurmHandle, info: JobInfo | null) => boolean): Promise<Map<SlurmHandle, JobInfo | null>> {
    const out = new Map<SlurmHandle, JobInfo | null>();
    const cluster = await this.o.cluster();
    const asked = handles.filter((h) => h.jobId !== null && (h.cluster === '' || h.cluster === cluster));
    for (const h of handles) out.set(h, null);
    if (asked.length === 0) return out;
    await this.ping();
    this.calls.squeue++;
    const rows = await squeueJobs(this.o.runner, asked.map((h) => h.jobId!));
    for (const h of asked) out.set(h, pick(rows, { jobId: h.jobId!, submittedAt: h.submittedAt }));

    const more = asked.filter((h) => needExit(h, out.get(h) ?? null));
    if (more.length > 0) {
      let extra: JobInfo[] | null = null;
      if (this.now() >= this.accountingOffUntil) {
        this.calls.sacct++;
        const a = await sacctJobs(this.o.runner, more.map((h) => h.jobId!));
        if (a.ok) extra = a.rows;
        else if (a.accountingOff) this.accountingOffUntil = this.now() + (this.o.accountingRetryMs ?? 5 * 60_000);
      }
      // slurmdbd writes a job's end a moment after the controller knows it: an accounting row that
      // is not over yet for a job squeue calls over carries no exit code (ExitCode 0:0 while running).
      const lagging = (h: SlurmHandle): boolean => {
        const had = out.get(h);
        if (!had || phaseOf(had.state) !== 'over') return false;
        const row = extra ? pick(extra, { jobId: h.jobId!, submittedAt: h.submittedAt }) : null;
        return !row || phaseOf(row.state) !== 'over';
      };
      if (more.some(lagging)) {
        // The controller still holds recently finished jobs, with exit codes (accounting off or behind).
        this.calls.scontrol++;
        const held = await scontrolJobs(this.o.runner);
        extra = [...held, ...(extra ?? []).filter((r) => !held.some((x) => x.jobId === r.jobId))];
      }
      for (const h of more) {
        const better = extra ? pick(extra, { jobId: h.jobId!, submittedAt: h.submittedAt }) : null;
        const had = out.get(h) ?? null;
        // squeue's state is the newest; the other source adds the exit code (and knows forgotten jobs).
        if (better && had) out.set(h, { ...had, exit: better.exit, endAt: had.endAt ?? better.endAt, startAt: had.startAt ?? better.startAt });
        else if (better) out.set(h, better);
      }
    }
    const now = this.now();
    for (const [h, info] of out) if (info && h.jobId) this.cache.set(`${h.cluster}:${h.jobId}`, { info, at: now });
    for (const [k, v] of this.cache) if (now - v.at > CACHE_TTL_MS) this.cache.delete(k);
    return out;
  }

  async poll(handles: SlurmHandle[]): Promise<PollState[]> {
    const sentinels = new Map(handles.map((h) => [h, readSentinel(h.runDir)]));
    const infos = await this.lookup(handles, (h, info) => {
      if (!info) return true; // forgotten by the controller: accounting may know
      return phaseOf(info.state) === 'over' && !sentinels.get(h); // the exit code must come from Slurm
    });
    const cluster = await this.o.cluster();
    return handles.map((h) => this.stateOf(h, infos.get(h) ?? null, sentinels.get(h) ?? null, cluster));
  }

  private stateOf(h: SlurmHandle, info: JobInfo | null, sentinel: Sentinel | null, cluster: string): PollState {
    if (!info) {
      if (sentinel ?? readSentinel(h.runDir)) return { state: 'done' };
      if (h.jobId === null) return { state: 'lost', reason: `the Slurm job id of ${h.runDir} was never recorded and it holds no exit code` };
      if (h.cluster !== '' && h.cluster !== cluster) return { state: 'lost', reason: `job ${h.jobId} was submitted to Slurm cluster ${h.cluster}; Tend's Slurm commands talk to ${cluster}` };
      return { state: 'lost', reason: `Slurm has no record of job ${h.jobId} (cluster ${h.cluster || cluster}: neither squeue nor accounting) and ${h.runDir} holds no exit code` };
    }
    const phase = phaseOf(info.state);
    if (phase === 'queued') return sentinel ? { state: 'done' } : { state: 'queued' };
    if (phase === 'over') {
      if (sentinel) return { state: 'done' };
      // The wrapper ran (pid.json) and Slurm ended the job a moment ago: let the sentinel show.
      const graceMs = this.o.sentinelGraceMs ?? 3000;
      if (readPidRecord(h.runDir) && info.endAt !== null && this.now() - info.endAt < graceMs) return { state: 'running', startedAt: routineStartedAt(h, info), heartbeatAt: readHeartbeat(h.runDir) };
      return { state: 'done' };
    }
    if (phase === null && sentinel) return { state: 'done' };
    // The routine writes straight into its logs: the poller keeps their cap (local/logcap.ts).
    capLogs(h.runDir);
    return { state: 'running', startedAt: routineStartedAt(h, info), heartbeatAt: readHeartbeat(h.runDir) };
  }

  async fetch(h: SlurmHandle): Promise<Outcome> {
    const sentinel = readSentinel(h.runDir);
    if (sentinel) capLogs(h.runDir, true);
    let info = h.jobId ? (this.cache.get(`${h.cluster}:${h.jobId}`)?.info ?? null) : null;
    if (!info || phaseOf(info.state) !== 'over') {
      try {
        info = (await this.lookup([h], (_, i) => !i || (phaseOf(i.state) === 'over' && !sentinel))).get(h) ?? null;
      } catch (err) {
        if (!sentinel) throw err;
        info = null; // the sentinel alone tells how it ended
      }
    }
    const phase = info ? phaseOf(info.state) : null;
    if (!sentinel && (phase === 'queued' || phase === 'running')) throw new TendError('CONFLICT', `Slurm job ${h.jobId} is still ${info!.state}`);
    return outcomeOf(h, info, sentinel ?? readSentinel(h.runDir));
  }
}

function routineEnd(sentinel: Sentinel | null, exit: { code: number | null; signal: string | null }): string {
  if (sentinel?.kind === 'error') return sentinel.message;
  if (exit.signal) return `stopped by ${exit.signal}`;
  if (exit.code !== null) return `exited ${exit.code}`;
  return 'no exit code';
}

/** The outcome from the sentinel (exit code) and Slurm's view (state, times). */
export function outcomeOf(h: SlurmHandle, info: JobInfo | null, sentinel: Sentinel | null): Outcome {
  const jobRef = `Slurm job ${h.jobId ?? '?'}`;
  let exitCode: number | null = null;
  let signal: string | null = null;
  let reason: string | null = null;
  // The wrapper started on a node (or at least the batch script ran: a non-zero status).
  const ran = sentinel !== null || readPidRecord(h.runDir) !== null || (info?.exit !== null && info?.exit !== undefined && (info.exit.code !== 0 || info.exit.signal !== 0));
  if (sentinel?.kind === 'exit') exitCode = sentinel.code;
  else if (sentinel?.kind === 'signal') signal = sentinel.signal;
  else if (sentinel?.kind === 'error') reason = sentinel.message;
  else if (info?.exit && ran) {
    // No sentinel: the batch script's status as Slurm recorded it.
    if (info.exit.signal > 0) signal = signalName(info.exit.signal);
    else if (info.exit.code === EXIT_DIR_NOT_VISIBLE) {
      reason = `${jobRef} ran on ${info.nodes ?? 'a node'} that cannot see the job directory ${h.runDir}: put Tend's data dir on a filesystem the nodes mount (see wrapper.log)`;
    } else if (info.exit.code === EXIT_BAD_ARGV) reason = `${jobRef}: the batch script could not read the command (see ${h.runDir}/wrapper.log)`;
    else if (info.exit.code === EXIT_NO_SENTINEL) reason = `${jobRef}: the job wrapper ended without an exit code (see ${h.runDir}/wrapper.log)`;
    else if (info.exit.code > 128 && info.exit.code <= 192) signal = signalName(info.exit.code - 128);
    else exitCode = info.exit.code;
  }

  const state = info?.state ?? null;
  const cancel = readCancelRecord(h.runDir);
  const end = routineEnd(sentinel, { code: exitCode, signal });
  if (cancel) {
    reason = `cancelled (${ran ? end : 'while queued in Slurm'}${cancel.signal === 'KILL' ? ` after a ${cancel.graceMs} ms grace period` : ''}; ${jobRef}${state ? ` ${state}` : ''})`;
  } else if (state && STATE_MEANING[state]) {
    reason = `${jobRef} ${info!.rawState}: ${STATE_MEANING[state]}${info!.reason && state !== 'CANCELLED' ? ` (${info!.reason})` : ''}; the routine ${ran ? end : 'never ran'}`;
  } else if (reason === null && !sentinel && exitCode === null && signal === null) {
    reason = info ? `${jobRef} ended ${info.state} and the job directory ${h.runDir} holds no exit code` : `no exit code in ${h.runDir} and Slurm has no record of job ${h.jobId ?? '?'}`;
  } else if (reason === null && (exitCode !== 0 || signal !== null)) {
    reason = `${signal ? `killed by ${signal}` : `exit ${exitCode}`} (${jobRef} ${state ?? 'unknown to Slurm'})`;
  }

  if (reason === null && exitCode === 0) {
    const manifest = readSlurmManifest(h.runDir);
    if (manifest && manifest.outputs.length > 0) {
      const missing = missingOutputs(manifest.cwd, manifest.outputs);
      if (missing.length > 0) reason = `promised output missing: ${missing.join(', ')}`;
    }
  }
  return { exitCode, signal, reason, startedAt: routineStartedAt(h, info), endedAt: sentinel?.at ?? info?.endAt ?? null };
}
