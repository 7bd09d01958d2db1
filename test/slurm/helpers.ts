// Shared by the Slurm tests: is Slurm here at all, bring the test cluster up (scripts/slurm/up.sh,
// fast when it is up already), job specs, a runner that counts commands, direct Slurm queries for
// assertions, and a lock that keeps the test that stops the controller away from the others.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JobSpec } from '../../main/engine/backend.js';
import { maskArgs } from '../../main/engine/mask.js';
import { execRunner, queryEnv, type SlurmCommand, type SlurmRunner } from '../../worker/slurm/commands.js';
import { waitFor } from '../helpers/wait.js';

export const REPO = resolve(fileURLToPath(new URL('../../', import.meta.url)));
export const FIXTURES = join(REPO, 'test', 'fixtures');
export const GATED = join(REPO, 'test', 'integration', 'fixtures', 'gated.sh');
export const UP_SCRIPT = join(REPO, 'scripts', 'slurm', 'up.sh');

/** Slurm's client commands are installed (the only reason these tests may skip). */
export const HAVE_SLURM = spawnSync('sinfo', ['--version'], { encoding: 'utf8' }).status === 0;
export const SKIP_MESSAGE = 'Slurm tests skipped: `sinfo` is not on PATH (install and start a test cluster with `sudo bash scripts/slurm/up.sh`)';

if (!HAVE_SLURM) process.stderr.write(`${SKIP_MESSAGE}\n`);

/** Start the test cluster when this user may (root), else check it answers. Throws with the reason. */
export function ensureCluster(): void {
  if (process.getuid?.() === 0) {
    const r = spawnSync('bash', [UP_SCRIPT], { encoding: 'utf8', timeout: 300_000 });
    if (r.status !== 0) throw new Error(`scripts/slurm/up.sh failed (${r.status ?? r.signal}):\n${r.stderr}${r.stdout}`);
    return;
  }
  const r = spawnSync('scontrol', ['ping'], { encoding: 'utf8' });
  if (!/is UP/.test(r.stdout)) throw new Error(`Slurm is installed but its controller does not answer (${r.stdout.trim()}); start it with sudo bash scripts/slurm/up.sh`);
}

export function scratch(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }) };
}

let seq = 0;
/** A job spec for the backend alone (no engine): its run dir under `root`. */
export function jobSpec(root: string, command: string, args: string[] = [], over: Partial<JobSpec> = {}): JobSpec {
  const runId = `t${process.pid}-${Date.now().toString(36)}-${seq++}`;
  const runDir = join(root, 'runs', '2026-01-01', runId);
  mkdirSync(join(root, 'runs'), { recursive: true });
  return {
    runId,
    kind: 'job',
    routineId: null,
    jobId: null,
    attempt: 1,
    command,
    args,
    cwd: null,
    env: {},
    scheduledAt: Date.now(),
    runDir,
    logCapBytes: 1024 * 1024,
    outputs: [],
    revision: null,
    maskedArgs: maskArgs(args),
    slurm: null,
    ...over,
  };
}

export interface CountingRunner extends SlurmRunner {
  counts: Record<SlurmCommand, number>;
  log: { cmd: SlurmCommand; args: string[] }[];
  reset(): void;
}

/** The real runner, counting each command (to pin "one squeue per pass"). */
export function countingRunner(inner: SlurmRunner = execRunner()): CountingRunner {
  const zero = (): Record<SlurmCommand, number> => ({ sbatch: 0, squeue: 0, sacct: 0, scontrol: 0, scancel: 0, sinfo: 0 });
  const r: CountingRunner = {
    counts: zero(),
    log: [],
    reset() {
      r.counts = zero();
      r.log = [];
    },
    run(cmd, args, opts) {
      r.counts[cmd]++;
      r.log.push({ cmd, args });
      return inner.run(cmd, args, opts);
    },
  };
  return r;
}

/** A Slurm command's stdout, for assertions (times as epoch seconds). */
export function slurm(cmd: SlurmCommand | 'sacctmgr', args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', env: queryEnv(), timeout: 30_000 });
}

/** sacct's State and ExitCode of a job (waits for accounting to have its end). */
export async function accounting(jobId: string, timeoutMs = 30_000): Promise<{ state: string; exit: string }> {
  return waitFor(
    () => {
      const line = slurm('sacct', ['--noheader', '--parsable2', '--allocations', `--jobs=${jobId}`, '--format=State,ExitCode']).trim().split('\n')[0] ?? '';
      const [state, exit] = line.split('|');
      return state && !/PENDING|RUNNING|COMPLETING/.test(state) ? { state, exit: exit ?? '' } : null;
    },
    timeoutMs,
    `accounting to record the end of job ${jobId}`,
    250,
  );
}

/** Slurm job ids (in the controller's memory or accounting) of jobs with this name. */
export function jobsNamed(name: string): string[] {
  const live = slurm('squeue', ['--noheader', '--states=all', `--name=${name}`, '--format=%i']).split('\n').map((s) => s.trim()).filter(Boolean);
  const past = slurm('sacct', ['--noheader', '--parsable2', '--allocations', '--starttime=now-1days', `--name=${name}`, '--format=JobIDRaw']).split('\n').map((s) => s.trim()).filter(Boolean);
  return [...new Set([...live, ...past])].sort();
}

/** scancel every job whose working directory (its run dir) is under `dir`: no test leaves jobs behind. */
export function cancelJobsUnder(dir: string): string[] {
  const ids = slurm('squeue', ['--noheader', '--format=%i|%Z'])
    .split('\n')
    .map((l) => l.split('|'))
    .filter(([id, wd]) => id && wd && wd.startsWith(dir))
    .map(([id]) => id!.trim());
  if (ids.length > 0) slurm('scancel', ids);
  return ids;
}

const LOCK = join(tmpdir(), 'tend-slurm-tests.lock');

/**
 * A lock on the test cluster across test files (vitest may run them in parallel): `shared` for
 * tests that use the cluster, `exclusive` for the one that stops the controller. Released by
 * the returned function, or by the OS if this process dies (flock on an open file).
 */
export async function lockCluster(mode: 'shared' | 'exclusive', timeoutMs = 600_000): Promise<() => Promise<void>> {
  const child = spawn('flock', [mode === 'shared' ? '--shared' : '--exclusive', '--timeout', String(Math.ceil(timeoutMs / 1000)), LOCK, '-c', 'echo locked; exec cat'], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let exited: number | null | undefined;
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
  child.on('exit', (code) => (exited = code));
  await waitFor(
    () => {
      if (exited !== undefined) throw new Error(`flock ${mode} on ${LOCK} failed (${exited}): ${err}`);
      return out.includes('locked');
    },
    timeoutMs + 5000,
    `the ${mode} lock on the test cluster`,
    50,
  );
  return async () => {
    child.stdin.end();
    await waitFor(() => exited !== undefined, 10_000, 'the cluster lock to be released');
  };
}
