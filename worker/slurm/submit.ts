// Submitting a job to Slurm: the same job directory as the local backend (run.sh, manifest, the
// streams and the sentinel, all written on the node by run.sh), plus slurm.sh, the batch script
// given to `sbatch --parsable`. Idempotent per run dir: a directory that records a Slurm job id
// is adopted; one whose sbatch may have run before a crash is looked up by job name first.
import { closeSync, mkdirSync, openSync, statSync, writeFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import type { JobSpec } from '../../main/engine/backend.js';
import { TendError } from '../../main/engine/errors.js';
import { inheritedEnv } from '../inherited-env.js';
import { baseManifest, jobPath } from '../jobdir/jobdir.js';
import { DEFAULT_LOG_CAP_BYTES } from '../jobdir/logs.js';
import { currentBootId } from '../jobdir/proc.js';
import { checkRevision } from '../jobdir/revision.js';
import { tendEnv } from '../local/submit.js';
import { localWrapperScript } from '../local/tools.js';
import { describeFailure, type SlurmRunner } from './commands.js';
import { handleFromRunDir, type SlurmHandle } from './handle.js';
import { argvEnv, batchScript, readAnyManifest, slurmPath, writeSlurmManifest, writeSlurmRecord, type SlurmManifest, type SlurmRecord } from './jobdir.js';
import { SUBMIT_SLACK_MS, parseSacct, parseSqueue, SACCT_FIELDS, SQUEUE_FORMAT } from './query.js';

export interface SubmitContext {
  runner: SlurmRunner;
  tendVersion: string;
  /** Resolves the cluster's name (cached by the backend). */
  cluster: () => Promise<string>;
  /** The environment jobs inherit (default: this process's). */
  baseEnv?: NodeJS.ProcessEnv;
}

/**
 * The job name: how a resubmission finds a job whose id never reached the run dir. Run ids of
 * batch jobs (`job-12`) repeat across data dirs, so the name also holds a digest of the run dir.
 */
export function jobNameFor(runId: string, runDir: string): string {
  // node:crypto with its first use: an idle daemon need not hold it (main/engine/lazy-crypto.ts).
  return `tend:${runId.slice(0, 150)}:${process.getBuiltinModule('node:crypto').createHash('sha256').update(runDir).digest('hex').slice(0, 12)}`;
}

function validate(spec: JobSpec): void {
  if (!isAbsolute(spec.runDir)) throw new TendError('INVALID', `runDir must be absolute: ${spec.runDir}`);
  if (spec.command.trim() === '') throw new TendError('INVALID', 'command is empty');
  if (spec.cwd !== null && !isAbsolute(spec.cwd)) throw new TendError('INVALID', `cwd must be absolute: ${spec.cwd}`);
  const steering = Object.keys(spec.env).filter((k) => /^(SBATCH_|SLURM_)/.test(k));
  if (steering.length > 0) {
    throw new TendError('INVALID', `environment variables ${steering.join(', ')} would change how sbatch submits the job: give sbatch flags as slurm options instead`);
  }
}

/**
 * The environment sbatch runs with, which is also the job's (`--export=ALL`): this process's
 * without SBATCH_* (they would steer sbatch) and without SLURM_* of an enclosing job, then the
 * routine's variables, Tend's, and the command line.
 */
export function submitEnv(spec: JobSpec, base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined && !/^(SBATCH_|SLURM_|TEND_SLURM_ARG)/.test(k)) env[k] = v;
  return { ...env, ...spec.env, ...tendEnv(spec), ...argvEnv([spec.command, ...spec.args]) };
}

/** Look a job up by its name, submitted at or after `since` (squeue, then sacct): its id or null. */
export async function findByName(runner: SlurmRunner, jobName: string, since: number): Promise<string | null> {
  const q = await runner.run('squeue', ['--noheader', '--states=all', `--name=${jobName}`, `--format=${SQUEUE_FORMAT}`]);
  const fresh = (rows: { jobId: string; submitAt: number | null }[]) =>
    rows.filter((r) => r.submitAt === null || r.submitAt >= since - SUBMIT_SLACK_MS).sort((a, b) => (b.submitAt ?? 0) - (a.submitAt ?? 0))[0]?.jobId ?? null;
  if (q.code === 0) {
    const id = fresh(parseSqueue(q.stdout));
    if (id) return id;
  } else if (!/invalid job id/i.test(q.stderr)) {
    throw new TendError('UNAVAILABLE', `cannot tell whether ${jobName} was submitted: ${describeFailure('squeue', q)}`);
  }
  const a = await runner.run('sacct', ['--noheader', '--parsable2', '--allocations', '--starttime=now-30days', `--name=${jobName}`, `--format=${SACCT_FIELDS}`]);
  return a.code === 0 ? fresh(parseSacct(a.stdout)) : null;
}

function parseParsable(stdout: string): { jobId: string; cluster: string | null } | null {
  const m = /^(\d+)(?:;(\S+))?\s*$/m.exec(stdout.trim());
  return m ? { jobId: m[1]!, cluster: m[2] ?? null } : null;
}

export async function submitSlurmJob(spec: JobSpec, ctx: SubmitContext): Promise<SlurmHandle> {
  validate(spec);
  const runDir = spec.runDir;
  const jobName = jobNameFor(spec.runId, runDir);
  // domain/slurm.ts holds the options' schema (zod): loaded by the first submission, not at start.
  const { sbatchArgs } = await import('../../main/engine/domain/slurm.js');
  const optionArgs = sbatchArgs(spec.slurm ?? null);
  const cwd = spec.cwd ?? runDir;
  const logCapBytes = spec.logCapBytes > 0 ? spec.logCapBytes : DEFAULT_LOG_CAP_BYTES;

  // Adoption: submitted already (slurm.json), or perhaps (the batch script is there, no id yet:
  // sbatch may have answered just before a crash).
  const adopted = handleFromRunDir(runDir, spec.runId);
  if (adopted) return adopted;
  const found = readAnyManifest(runDir);
  if (found && found.backend !== 'slurm') throw new TendError('CONFLICT', `job directory ${runDir} already holds a ${found.backend} job; a run is launched once`);
  const earlier = writtenAt(slurmPath(runDir, 'batchScript'));
  if (earlier !== null) {
    const id = await findByName(ctx.runner, jobName, earlier);
    if (id) return record(spec, { cluster: await ctx.cluster(), jobId: id, submittedAt: earlier, jobName }, { cwd, logCapBytes, optionArgs, tendVersion: ctx.tendVersion });
  }

  if (spec.revision !== null) {
    const refusal = await checkRevision(spec.cwd, spec.revision);
    if (refusal !== null) throw new TendError('REFUSED', `LAUNCH_REFUSED: ${refusal}`);
  }
  const cluster = await ctx.cluster();
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  const submittedAt = Date.now();
  writeFileSync(jobPath(runDir, 'wrapper'), localWrapperScript(runDir, cwd), { mode: 0o700 });
  writeFileSync(slurmPath(runDir, 'batchScript'), batchScript(runDir), { mode: 0o700 });
  // slurmd creates --output under the job's umask (the daemon's, often 022): made 0600 first, then appended to.
  closeSync(openSync(jobPath(runDir, 'wrapperLog'), 'a', 0o600));

  const requeue = optionArgs.some((a) => a === '--requeue');
  const args = [
    '--parsable',
    `--job-name=${jobName}`,
    `--chdir=${runDir}`,
    `--output=${jobPath(runDir, 'wrapperLog')}`,
    '--open-mode=append',
    '--export=ALL',
    // Tend decides about retries: Slurm must not run the routine a second time by itself.
    ...(requeue ? [] : ['--no-requeue']),
    ...optionArgs,
    slurmPath(runDir, 'batchScript'),
  ];
  const env = submitEnv(spec, ctx.baseEnv ?? inheritedEnv());
  env['LC_ALL'] = 'C';
  const r = await ctx.runner.run('sbatch', args, { env });
  const parsed = r.code === 0 ? parseParsable(r.stdout) : null;
  const facts = { cwd, logCapBytes, optionArgs, tendVersion: ctx.tendVersion };
  if (!parsed) {
    // sbatch may have reached the controller and then failed or timed out here: never leave a
    // job running that Tend does not know about.
    let id: string | null = null;
    try {
      id = await findByName(ctx.runner, jobName, submittedAt);
    } catch {
      id = null;
    }
    if (id) return record(spec, { cluster, jobId: id, submittedAt, jobName }, facts);
    throw new TendError('UNAVAILABLE', `sbatch refused the job: ${r.code === 0 ? `unexpected answer ${JSON.stringify(r.stdout.slice(0, 200))}` : describeFailure('sbatch', r)}`);
  }
  return record(spec, { cluster: parsed.cluster ?? cluster, jobId: parsed.jobId, submittedAt, jobName }, facts);
}

function writtenAt(path: string): number | null {
  try {
    return Math.floor(statSync(path).mtimeMs);
  } catch {
    return null;
  }
}

/** slurm.json (the record that counts), then the manifest, once the job id is known. */
function record(
  spec: JobSpec,
  rec: SlurmRecord,
  facts: { cwd: string; logCapBytes: number; optionArgs: string[]; tendVersion: string },
): SlurmHandle {
  const runDir = spec.runDir;
  writeSlurmRecord(runDir, rec);
  // No pids here: the processes run on a node, and pid.json (written there by run.sh) names them.
  const manifest: SlurmManifest = {
    ...baseManifest(spec, { tendVersion: facts.tendVersion, cwd: facts.cwd, logCapBytes: facts.logCapBytes, createdAt: rec.submittedAt, bootId: currentBootId() }),
    backend: 'slurm',
    slurm: { cluster: rec.cluster, jobId: rec.jobId, jobName: rec.jobName, submittedAt: rec.submittedAt, sbatchArgs: facts.optionArgs },
  };
  writeSlurmManifest(runDir, manifest);
  return { backend: 'slurm', cluster: rec.cluster, jobId: rec.jobId, runDir, runId: spec.runId, submittedAt: rec.submittedAt };
}
