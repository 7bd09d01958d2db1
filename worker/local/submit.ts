// Launching a local job: check the pinned revision, claim and fill the job directory, start the
// wrapper detached from this process, and wait (briefly) for it to record the routine's pid.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdir, open, rename, writeFile } from 'node:fs/promises';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { JobSpec } from '../../main/engine/backend.js';
import { TendError, errorMessage } from '../../main/engine/errors.js';
import { currentBootId, readProcStat, startTicksToMs } from './proc.js';
import {
  jobPath,
  readPidRecord,
  readLaunched,
  readSentinel,
  wasLaunched,
  writeSentinelIfAbsent,
  type Manifest,
} from './jobdir.js';
import { wrapperScript } from './wrapper.js';
import { DEFAULT_LOG_CAP_BYTES, halfCap } from './logs.js';
import { checkRevision } from './revision.js';
import type { LocalHandle } from './handle.js';

export interface SubmitContext {
  tendVersion: string;
  /** Called when a wrapper this process started exits (the job is over, or nearly). */
  onExit?: ((runId: string) => void) | undefined;
  /** How long to wait for the wrapper to record the routine's pid before returning anyway. */
  startTimeoutMs: number;
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

let bashPath: string | null = null;

/**
 * The bash that runs wrappers, found on this process's PATH (or the standard directories), not on
 * the job's: a routine's own PATH must not decide whether its wrapper starts.
 */
export function findBash(): string | null {
  if (bashPath) return bashPath;
  const dirs = [...(process.env['PATH'] ?? '').split(delimiter), '/usr/local/bin', '/usr/bin', '/bin'];
  for (const dir of dirs) {
    if (!isAbsolute(dir)) continue;
    try {
      accessSync(join(dir, 'bash'), constants.X_OK);
      bashPath = join(dir, 'bash');
      return bashPath;
    } catch {
      // keep looking
    }
  }
  return null;
}

/**
 * Create the run dir; refuse one where a wrapper ever started, so a job is never launched twice.
 * One a launcher left half-written (killed before it started the wrapper) is taken over.
 */
async function claimRunDir(runDir: string): Promise<void> {
  const parent = dirname(runDir);
  if (!knownDirs.has(parent)) {
    await mkdir(parent, { recursive: true });
    knownDirs.add(parent);
  }
  try {
    await mkdir(runDir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && knownDirs.delete(parent)) return claimRunDir(runDir); // the day's directory was removed since
    if (code !== 'EEXIST') throw err;
    if (wasLaunched(runDir)) throw new TendError('CONFLICT', `job directory ${runDir} already holds a job; a run is launched once`);
  }
}

/** `<runs>/<day>` directories known to exist (one mkdir per day, not per job). */
const knownDirs = new Set<string>();

/**
 * Write a file a reader may look at through a temp name and a rename, off the event loop. No
 * fsync: these files matter to a live machine (a restarted daemon); after a power cut every job
 * is gone anyway, and a torn file reads as absent.
 */
async function writeFileAtomicAsync(path: string, data: string, mode = 0o644): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, data, { mode });
  await rename(tmp, path);
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
  await claimRunDir(runDir);
  const cwd = spec.cwd ?? runDir;
  const logCapBytes = spec.logCapBytes > 0 ? spec.logCapBytes : DEFAULT_LOG_CAP_BYTES;
  const bootId = currentBootId();
  const manifest: Manifest = {
    manifestVersion: 1,
    backend: 'local',
    tendVersion: ctx.tendVersion,
    runId: spec.runId,
    kind: spec.kind,
    routineId: spec.routineId,
    jobId: spec.jobId,
    attempt: spec.attempt,
    command: spec.command,
    args: [...spec.maskedArgs],
    cwd,
    envNames: Object.keys(spec.env).sort(),
    outputs: [...spec.outputs],
    revision: spec.revision,
    logCapBytes,
    scheduledAt: spec.scheduledAt,
    createdAt: Date.now(),
    bootId,
    wrapper: { pid: null, startTime: null },
    routine: { pid: null, startTime: null },
    startedAt: null,
  };
  const script = jobPath(runDir, 'wrapper');
  // A new inode (temp + rename): a wrapper of an interrupted launch may still be reading the old one.
  // The three files are independent: written together (the launch waits for the slowest).
  const [wrote, described, opened] = await Promise.allSettled([
    writeFileAtomicAsync(script, wrapperScript({ runDir, cwd, halfCapBytes: halfCap(logCapBytes) }), 0o755),
    writeFileAtomicAsync(jobPath(runDir, 'manifest'), manifestText(manifest)),
    open(jobPath(runDir, 'wrapperLog'), 'a', 0o644),
  ]);
  if (opened.status === 'rejected' || wrote.status === 'rejected' || described.status === 'rejected') {
    if (opened.status === 'fulfilled') await opened.value.close();
    throw [wrote, described, opened].map((r) => (r.status === 'rejected' ? (r.reason as unknown) : null)).find((e) => e !== null);
  }
  const log = opened.value;

  // The wrapper gets its own session (detached), files for stdio and no reference from this
  // process: a daemon killed with -9 leaves it running, and it still writes the sentinel.
  const env = { ...process.env, ...spec.env, ...tendEnv(spec) };
  const bash = findBash();
  if (!bash) {
    await log.close();
    const reason = 'cannot start the job wrapper: bash not found';
    writeSentinelIfAbsent(runDir, { kind: 'error', message: reason });
    throw new TendError('UNAVAILABLE', reason);
  }
  let child;
  try {
    child = spawn(bash, [script, spec.command, ...spec.args], { cwd: runDir, env, detached: true, stdio: ['ignore', log.fd, log.fd] });
  } finally {
    await log.close();
  }
  let exited = false;
  let spawnError: Error | null = null;
  child.on('error', (err) => {
    spawnError = err;
  });
  child.once('exit', () => {
    exited = true;
    ctx.onExit?.(spec.runId);
  });
  child.unref();

  const wrapperPid = child.pid ?? null;
  if (wrapperPid === null) {
    await delay(0); // the 'error' event comes on a later tick
    const reason = `cannot start the job wrapper: ${spawnError ? errorMessage(spawnError) : 'spawn failed'}`;
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
  // Readers see either the launch-time manifest or this one, never a mix (atomic rename).
  await writeFileAtomicAsync(jobPath(runDir, 'manifest'), manifestText({
    ...manifest,
    wrapper: { pid: handle.wrapperPid, startTime: handle.wrapperStartTime },
    routine: { pid: handle.pid, startTime: handle.startTime },
    startedAt: startTicksToMs(handle.startTime),
  }));
  return handle;
}
