// The Slurm backend: jobs are submitted with sbatch to the cluster this machine's Slurm client
// commands talk to. Each job has the same directory as a local job (run.sh writes the streams and
// the sentinel on the node); the handle is {cluster, jobId, runDir}; poll batches one squeue (and
// at most one sacct) for all jobs in flight; cancel is scancel; health is scontrol ping + sinfo.
import { join } from 'node:path';
import type { Backend, Handle, Health, JobSpec, Outcome, PollState } from '../../main/engine/backend.js';
import { TendError } from '../../main/engine/errors.js';
import { readHeartbeat, readManifest } from '../jobdir/jobdir.js';
import { followLog, tailLog, type FollowOptions, type Stream } from '../jobdir/logs.js';
import { inheritedEnv } from '../inherited-env.js';
import { cancelSlurmJob } from './cancel.js';
import { execRunner, type SlurmRunner } from './commands.js';
import { handleFromRunDir, parseSlurmHandle, toHandle, type SlurmHandle } from './handle.js';
import { clusterName, slurmHealth } from './health.js';
import { SlurmTracker } from './settle.js';
import { submitSlurmJob } from './submit.js';

export interface SlurmBackendOptions {
  dataDir: string;
  tendVersion: string;
  /** How Slurm's commands are run (tests count or fake them); default: execFile, PATH or binDir. */
  runner?: SlurmRunner;
  /** Directory of sbatch, squeue … (default: PATH; the host's settings: TEND_SLURM_BIN_DIR). */
  binDir?: string | null;
  /** The runs dir is shared with the nodes in a way Tend cannot tell (the host's settings: TEND_SLURM_SHARED_FS=1). */
  sharedFs?: boolean;
  /** Grace between TERM and the final scancel when cancel is given none (default 10 s). */
  killGraceMs?: number;
  /** Deadline of one Slurm command (default 20 s). */
  commandTimeoutMs?: number;
  /** Slurm queries running at once (default 4). */
  maxConcurrent?: number;
  /** sbatch runs through this many bash helpers side by side (default 2; 0: one spawn per job). */
  sbatchHelpers?: number;
  /** The environment jobs inherit (default: this process's). */
  baseEnv?: NodeJS.ProcessEnv;
}

export interface SlurmBackend extends Backend {
  readonly name: 'slurm';
  readonly tracker: SlurmTracker;
  tailLog(runDir: string, stream: Stream, maxBytes: number): string;
  followLog(runDir: string, stream: Stream, opts?: FollowOptions): AsyncGenerator<string>;
  readHeartbeat(runDir: string): number | null;
  handleFromRunDir(runDir: string): Handle | null;
}

function slurmHandle(h: Handle): SlurmHandle {
  const parsed = parseSlurmHandle(h);
  if (!parsed) throw new TendError('INVALID', `not a Slurm job handle: ${JSON.stringify(h).slice(0, 200)}`);
  return parsed;
}

export function createSlurmBackend(opts: SlurmBackendOptions): SlurmBackend {
  const env = opts.baseEnv ?? inheritedEnv();
  const runner = opts.runner ?? execRunner({
      binDir: opts.binDir ?? null,
      timeoutMs: opts.commandTimeoutMs,
      maxConcurrent: opts.maxConcurrent,
      sbatchHelpers: opts.sbatchHelpers,
    });
  const sharedFs = opts.sharedFs ?? false;
  const killGraceMs = opts.killGraceMs ?? 10_000;
  const runsDir = join(opts.dataDir, 'runs');

  let cluster: Promise<string> | null = null;
  const clusterOnce = (): Promise<string> => {
    cluster ??= clusterName(runner).catch((err: unknown) => {
      cluster = null; // ask again next time
      throw err;
    });
    return cluster;
  };
  const tracker = new SlurmTracker({ runner, cluster: clusterOnce });

  return {
    name: 'slurm',
    tracker,

    async health(): Promise<Health> {
      const h = await slurmHealth({ runner, runsDir, declaredShared: sharedFs });
      if (h.ok) {
        try {
          await clusterOnce();
        } catch (err) {
          return { ok: false, reason: (err as Error).message };
        }
      }
      return h;
    },

    async submit(spec: JobSpec): Promise<Handle> {
      return toHandle(await submitSlurmJob(spec, { runner, tendVersion: opts.tendVersion, cluster: clusterOnce, baseEnv: env }));
    },

    async poll(handles: Handle[]): Promise<PollState[]> {
      const parsed = handles.map((h) => parseSlurmHandle(h));
      const valid = parsed.filter((h): h is SlurmHandle => h !== null);
      const states = await tracker.poll(valid);
      const byHandle = new Map(valid.map((h, i) => [h, states[i]!]));
      return parsed.map((h) => (h ? byHandle.get(h)! : { state: 'lost', reason: 'not a Slurm job handle' }));
    },

    fetch(handle: Handle): Promise<Outcome> {
      return tracker.fetch(slurmHandle(handle));
    },

    cancel(handle: Handle, graceMs: number): Promise<void> {
      const grace = Number.isFinite(graceMs) && graceMs >= 0 ? graceMs : killGraceMs;
      return cancelSlurmJob(runner, slurmHandle(handle), grace);
    },

    tailLog,
    followLog,
    // A Slurm job's manifest says backend: slurm, which the local reader does not take: null, as before.
    readManifest,
    readHeartbeat,
    handleFromRunDir(runDir: string): Handle | null {
      const h = handleFromRunDir(runDir, '');
      return h ? toHandle(h) : null;
    },
  };
}
