// Launching a local job: check the pinned revision, claim and fill the job directory, start the
// wrapper detached from this process, and wait (briefly) for it to record the routine's pid.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { JobSpec } from '../../main/engine/backend.js';
import { TendError, errorMessage } from '../../main/engine/errors.js';
import { currentBootId, readProcStat } from '../jobdir/proc.js';
import {
  baseManifest,
  jobPath,
  readPidRecord,
  readLaunched,
  type PidRecord,
  readSentinel,
  wasLaunched,
  writeSentinelIfAbsent,
  type Manifest,
} from '../jobdir/jobdir.js';
import { jobShell, localWrapperScript, type WaiterTools } from './tools.js';
import { HelperGone, launchHere, launchViaHelper, standbyHelper, type WrapperLaunch } from './spawner.js';
import { hearEnd, type Standby, type Standbys } from './standby.js';
import { goMessage } from './standby-script.js';
import type { BatchWaiter, BatchWaiters } from './batch-waiters.js';
import { placeWaiter, sharedWaiterText, WAITER_WORKDIR } from './shared-waiter.js';
import { DEFAULT_LOG_CAP_BYTES } from '../jobdir/logs.js';
import { checkRevision } from '../jobdir/revision.js';
import { inheritedEnv } from '../inherited-env.js';
import type { LocalHandle } from './handle.js';

export interface SubmitContext {
  tendVersion: string;
  /** Called when a wrapper this process started exits (the job is over, or nearly). */
  onExit?: ((runId: string) => void) | undefined;
  /** How long to wait for the wrapper to record the routine's pid before returning anyway. */
  startTimeoutMs: number;
  tools?: WaiterTools;
  /** TERM → KILL grace for what a routine leaves running in its process group when it ends. */
  killGraceMs?: number;
  /** Waiters started ahead for realtime routines' next instances. */
  standbys?: Standbys;
  /** Waiters kept between batch jobs: a job given to one is a message, not a waiter's start. */
  batchWaiters?: BatchWaiters;
  /** Where the waiter every job shares is kept (run.sh is a hard link to it); unset, each job's run.sh is its own. */
  waiters?: string;
}

/** The variables every job gets on top of the daemon's environment and `spec.env`. */
export function tendEnv(spec: JobSpec): Record<string, string> {
  return {
    TEND_RUN_ID: spec.runId,
    TEND_RUN_DIR: spec.runDir,
    TEND_ROUTINE: spec.routineId ?? (spec.jobId !== null ? `job-${spec.jobId}` : spec.runId),
    TEND_ATTEMPT: String(spec.attempt),
    TEND_SCHEDULED_AT: new Date(spec.scheduledAt).toISOString(),
  };
}

/** The whole environment of a job's routine: the daemon's, `spec.env` over it, the TEND_* variables over both. */
function jobEnv(spec: JobSpec): Record<string, string> {
  return { ...inheritedEnv(), ...spec.env, ...tendEnv(spec) };
}

/**
 * Create the run dir; refuse one where a wrapper ever started, so a job is never launched twice.
 * One a launcher left half-written (killed before it started the wrapper) is taken over. True
 * when the directory is new (nothing in it yet).
 */
function claimRunDir(runDir: string): boolean {
  const parent = dirname(runDir);
  if (!knownDirs.has(parent)) {
    mkdirSync(parent, { recursive: true, mode: 0o700 });
    knownDirs.add(parent);
  }
  try {
    mkdirSync(runDir, { mode: 0o700 });
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && knownDirs.delete(parent)) return claimRunDir(runDir); // the day's directory was removed since
    if (code !== 'EEXIST') throw err;
    if (wasLaunched(runDir)) throw new TendError('CONFLICT', `job directory ${runDir} already holds a job; a run is launched once`);
    return false;
  }
}

/** `<runs>/<day>` directories known to exist (one mkdir per day, not per job). */
const knownDirs = new Set<string>();

/**
 * Write a file a reader may look at through a temp name and a rename. No fsync: these files
 * matter to a live machine (a restarted daemon); after a power cut every job is gone anyway, and
 * a torn file reads as absent. Synchronous: a small file costs tens of microseconds this way,
 * where the promise API's open, write, close and rename (each a trip through the thread pool)
 * cost the daemon about 0.4 ms of CPU per file and delayed a restart by milliseconds on a busy
 * machine (profiled: 300 no-op jobs drained by a daemon, a realtime routine's death to its next start).
 */
function writeFileAtomicNow(path: string, data: string, mode = 0o600): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, data, { mode });
  renameSync(tmp, path);
}

function manifestText(m: Manifest): string {
  return `${JSON.stringify(m, null, 2)}\n`;
}

function validate(spec: JobSpec): void {
  if (!isAbsolute(spec.runDir)) throw new TendError('INVALID', `runDir must be absolute: ${spec.runDir}`);
  if (spec.command.trim() === '') throw new TendError('INVALID', 'command is empty');
  if (spec.cwd !== null && !isAbsolute(spec.cwd)) throw new TendError('INVALID', `cwd must be absolute: ${spec.cwd}`);
}

export async function submitLocalJob(spec: JobSpec, ctx: SubmitContext): Promise<LocalHandle> {
  validate(spec);
  if (spec.revision !== null) {
    const refusal = await checkRevision(spec.cwd, spec.revision);
    if (refusal !== null) throw new TendError('REFUSED', `LAUNCH_REFUSED: ${refusal}`);
  }

  const runDir = spec.runDir;
  const fresh = claimRunDir(runDir);
  const cwd = spec.cwd ?? runDir;
  const logCapBytes = spec.logCapBytes > 0 ? spec.logCapBytes : DEFAULT_LOG_CAP_BYTES;
  const bootId = currentBootId();
  const manifest: Manifest = { ...baseManifest(spec, { tendVersion: ctx.tendVersion, cwd, logCapBytes, createdAt: Date.now(), bootId }), backend: 'local' };
  const script = jobPath(runDir, 'wrapper');
  let shell: string[];
  let text: string;
  try {
    shell = jobShell(ctx.tools?.shell);
    text = ctx.waiters ? sharedWaiterText(ctx.tools, ctx.killGraceMs) : localWrapperScript(runDir, cwd, ctx.tools, ctx.killGraceMs);
  } catch (err) {
    const reason = errorMessage(err);
    writeSentinelIfAbsent(runDir, { kind: 'error', message: reason });
    throw new TendError('UNAVAILABLE', reason);
  }
  const taken = spec.realtime ? ctx.standbys?.take(spec) : null;
  if (taken) {
    const handle = await fromStandby(spec, manifest, taken, ctx, bootId);
    if (handle) return handle;
  }
  const pool = spec.realtime ? undefined : ctx.batchWaiters;
  const poolText = pool?.script() ?? null;
  let waiter = pool && poolText !== null ? pool.take(poolText) : null;
  // One waiting already is taken at once; only a new one's start is waited for.
  if (waiter instanceof Promise) waiter = await waiter;
  if (pool && waiter) {
    // A new directory's manifest is written by the waiter (off this thread, before its claim);
    // one taken over from an interrupted launch is replaced here, through a rename, as ever.
    const message = pool.message(waiter, runDir, cwd, [spec.command, ...spec.args], jobEnv(spec), fresh ? JSON.stringify(manifest) : '');
    if (message === null) pool.release(waiter);
    else {
      if (!fresh) writeFileAtomicNow(jobPath(runDir, 'manifest'), manifestText(manifest));
      const handle = await onBatchWaiter(spec, pool, waiter, message, ctx, bootId);
      if (handle) return handle;
    }
  }
  // A new inode or link (temp + rename): a wrapper of an interrupted launch may still be reading the old one.
  if (ctx.waiters) placeWaiter(ctx.waiters, script, text);
  else writeFileAtomicNow(script, text, 0o700);
  writeFileAtomicNow(jobPath(runDir, 'manifest'), manifestText(manifest));

  // The wrapper gets its own session (detached), files for stdio and no reference from this
  // process: a daemon killed with -9 leaves it running, and it still writes the sentinel.
  const launch: WrapperLaunch = { file: shell[0] as string, args: [...shell.slice(1), script, spec.command, ...spec.args], cwd: runDir, env: { ...jobEnv(spec), ...(ctx.waiters ? { [WAITER_WORKDIR]: cwd } : {}) }, log: jobPath(runDir, 'wrapperLog') };
  let exited = false;
  const onExit = () => {
    if (exited) return; // a realtime run's is heard twice: its pipe's end, and the helper's report
    exited = true;
    ctx.onExit?.(spec.runId);
  };
  let wrapperPid: number;
  try {
    try {
      wrapperPid = await ((spec.realtime ? launchHeard(launch, onExit, ctx) : null) ?? launchViaHelper(launch, onExit, ctx.tools?.spawner ?? true) ?? launchHere(launch, onExit));
    } catch (err) {
      // The helper went away: start it here. Had the helper started one already, the two
      // wrappers race for the directory's claim and the loser leaves at once (seen below).
      if (!(err instanceof HelperGone)) throw err;
      wrapperPid = await launchHere(launch, onExit);
    }
  } catch (err) {
    const reason = `cannot start the job wrapper: ${errorMessage(err)}`;
    writeSentinelIfAbsent(runDir, { kind: 'error', message: reason });
    throw new TendError('UNAVAILABLE', reason);
  }
  const wrapperStart = readProcStat(wrapperPid)?.startTime ?? null;

  const deadline = Date.now() + ctx.startTimeoutMs;
  // Our wrapper lost the claim to one an interrupted launch started: that one is the job.
  const other = () => {
    const l = readLaunched(runDir);
    return l !== null && l.pid !== wrapperPid ? l : null;
  };
  while (!readPidRecord(runDir) && !readSentinel(runDir) && (!exited || other()) && Date.now() < deadline) await delay(5);
  const rec = readPidRecord(runDir);
  const winner = other();
  if (!rec && !readSentinel(runDir) && exited && !winner) {
    writeSentinelIfAbsent(runDir, { kind: 'error', message: `the job wrapper exited before starting the routine (see ${jobPath(runDir, 'wrapperLog')})` });
  }

  const handle: LocalHandle = {
    backend: 'local',
    runId: spec.runId,
    runDir,
    pid: rec?.pid ?? null,
    startTime: rec?.startTime ?? null,
    wrapperPid: rec?.wrapperPid ?? winner?.pid ?? wrapperPid,
    wrapperStartTime: rec?.wrapperStartTime ?? (winner ? winner.startTime : wrapperStart),
    bootId,
  };
  // The manifest is not written again with the pids: readers take them from pid.json (readManifest).
  return handle;
}

/**
 * A realtime run's wrapper, through the helper, with a pipe for stdin whose other end this process
 * holds: the wrapper never reads it, and its exit closes the last copy (the routine's stdin is
 * /dev/null), which is heard here sooner than the helper's report of the exit (a restart waits for it).
 */
function launchHeard(l: WrapperLaunch, onExit: () => void, ctx: SubmitContext): Promise<number> | null {
  const helper = standbyHelper(ctx.tools?.spawner ?? true);
  if (!helper) return null;
  return helper.launchPiped(l, onExit).started.then(({ pid, stdin }) => {
    if (stdin) hearEnd(stdin, onExit);
    return pid;
  });
}

/**
 * Start the run from a standby: its manifest first (the standby's pair is the run's wrapper and
 * routine, known before the go), then the go message. Null when the standby turned out to be gone
 * before the message was written: the caller launches the ordinary way (should the standby have
 * read it after all, the directory's claim keeps the run single).
 */
async function fromStandby(spec: JobSpec, manifest: Manifest, taken: { standby: Standby; ready: PidRecord }, ctx: SubmitContext, bootId: string | null): Promise<LocalHandle | null> {
  const helper = standbyHelper(ctx.tools?.spawner ?? true);
  const text = goMessage(spec.runDir, tendEnv(spec));
  const { standby, ready } = taken;
  // Heard twice, once as the end of its pipe (the waiter's exit closes the last copy), once from the helper.
  let heard = false;
  const exited = () => {
    if (heard) return;
    heard = true;
    ctx.onExit?.(spec.runId);
  };
  if (!helper || text === null || !helper.onExitOf(standby.id, exited)) {
    ctx.standbys?.dismiss(standby);
    return null;
  }
  const handle: LocalHandle = { backend: 'local', runId: spec.runId, runDir: spec.runDir, pid: ready.pid, startTime: ready.startTime, wrapperPid: ready.wrapperPid, wrapperStartTime: ready.wrapperStartTime, bootId };
  // Its start is now, not when it was parked: quick deaths are timed from it.
  writeFileAtomicNow(jobPath(spec.runDir, 'manifest'), manifestText({
    ...manifest,
    wrapper: { pid: handle.wrapperPid, startTime: handle.wrapperStartTime },
    routine: { pid: handle.pid, startTime: handle.startTime },
    startedAt: Date.now(),
  }));
  if (!(await ctx.standbys!.go(standby, text, exited))) return null;
  return handle;
}

/**
 * Start the run on a batch waiter (the manifest is written): the job is a message, and its first
 * answer says what became of it. Null when the waiter left without claiming the directory: the
 * caller launches the ordinary way (the directory's claim keeps the run single either way).
 */
async function onBatchWaiter(spec: JobSpec, pool: BatchWaiters, waiter: BatchWaiter, message: string, ctx: SubmitContext, bootId: string | null): Promise<LocalHandle | null> {
  const runDir = spec.runDir;
  const answer = await pool.run(waiter, spec.runId, message);
  // It did not claim the directory (it could not write the manifest, or left): the ordinary launch writes the manifest and starts it.
  if (answer === 'refused' || (answer === 'gone' && readLaunched(runDir) === null)) return null;
  if (answer === 'taken' || answer === 'gone') {
    // Another waiter claimed it first (an interrupted launch's), or ours left after its claim: the directory tells.
    const deadline = Date.now() + ctx.startTimeoutMs;
    while (!readPidRecord(runDir) && !readSentinel(runDir) && Date.now() < deadline) await delay(5);
  }
  const rec = readPidRecord(runDir);
  const launched = rec ? null : readLaunched(runDir);
  if (!rec && !readSentinel(runDir) && answer === 'gone' && launched?.pid === waiter.pid) {
    writeSentinelIfAbsent(runDir, { kind: 'error', message: 'the job waiter exited before starting the routine' });
  }
  return {
    backend: 'local',
    runId: spec.runId,
    runDir,
    pid: rec?.pid ?? null,
    startTime: rec?.startTime ?? null,
    wrapperPid: rec?.wrapperPid ?? launched?.pid ?? waiter.pid,
    wrapperStartTime: rec?.wrapperStartTime ?? launched?.startTime ?? null,
    bootId,
  };
}
