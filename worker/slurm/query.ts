// What Slurm knows about a set of jobs, asked in as few calls as possible: one squeue for all of
// them (the controller's memory: pending, running and recently finished jobs), then, only for the
// jobs that need it, one sacct (the accounting database: exit codes, jobs the controller already
// forgot), or — when accounting is off — one `scontrol show job` for all jobs in memory.
//
// Rows whose submit time is older than the handle's are ignored: after a controller's state was
// reset, job ids start again at 1 and accounting still holds the old jobs under the same ids.
import { controllerUnreachable, describeFailure, type CommandResult, type SlurmRunner } from './commands.js';
import { baseState, parseExitCode } from './states.js';

export interface JobInfo {
  jobId: string;
  /** Base state: `CANCELLED by 0` → `CANCELLED`. */
  state: string;
  /** As printed (`CANCELLED by 0`), for reasons. */
  rawState: string;
  submitAt: number | null;
  startAt: number | null;
  endAt: number | null;
  /** Of the batch script; squeue does not print it. */
  exit: { code: number; signal: number } | null;
  reason: string | null;
  nodes: string | null;
  timeLimit: string | null;
  source: 'squeue' | 'sacct' | 'scontrol';
}

export class SlurmUnavailable extends Error {
  override name = 'SlurmUnavailable';
}

/** Epoch seconds (SLURM_TIME_FORMAT=%s) → ms; Unknown, None, N/A, 0 → null. */
export function epochMs(text: string | undefined): number | null {
  const t = (text ?? '').trim();
  if (!/^\d+$/.test(t)) return null;
  const n = Number(t);
  return n > 0 ? n * 1000 : null;
}

function nonEmpty(text: string | undefined): string | null {
  const t = (text ?? '').trim();
  return t === '' || t === 'None' || t === '(null)' || t === 'N/A' ? null : t;
}

export const SQUEUE_FORMAT = '%i|%T|%V|%S|%e|%r|%N|%l';
export const SACCT_FIELDS = 'JobIDRaw,State,ExitCode,Submit,Start,End,Reason,NodeList,Timelimit';

export function parseSqueue(stdout: string): JobInfo[] {
  const out: JobInfo[] = [];
  for (const line of stdout.split('\n')) {
    const f = line.split('|');
    if (f.length < 8 || !/^\d+$/.test(f[0]!.trim())) continue;
    const state = f[1]!.trim();
    out.push({
      jobId: f[0]!.trim(),
      state: baseState(state),
      rawState: state,
      submitAt: epochMs(f[2]),
      startAt: epochMs(f[3]),
      endAt: epochMs(f[4]),
      exit: null,
      reason: nonEmpty(f[5]),
      nodes: nonEmpty(f[6]),
      timeLimit: nonEmpty(f[7]),
      source: 'squeue',
    });
  }
  return out;
}

export function parseSacct(stdout: string): JobInfo[] {
  const out: JobInfo[] = [];
  for (const line of stdout.split('\n')) {
    const f = line.split('|');
    if (f.length < 9 || !/^\d+$/.test(f[0]!.trim())) continue;
    const state = f[1]!.trim();
    out.push({
      jobId: f[0]!.trim(),
      state: baseState(state),
      rawState: state,
      exit: parseExitCode(f[2]),
      submitAt: epochMs(f[3]),
      startAt: epochMs(f[4]),
      endAt: epochMs(f[5]),
      reason: nonEmpty(f[6]),
      nodes: nonEmpty(f[7]),
      timeLimit: nonEmpty(f[8]),
      source: 'sacct',
    });
  }
  return out;
}

/** `scontrol -o show job`: one line per job of `Key=Value` pairs (values may hold spaces). */
export function parseScontrol(stdout: string): JobInfo[] {
  const out: JobInfo[] = [];
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('JobId=')) continue;
    const kv = new Map<string, string>();
    const re = /(?:^|\s)([A-Za-z][A-Za-z0-9_/:]*)=/g;
    const keys: { key: string; start: number; valueAt: number }[] = [];
    for (let m = re.exec(line); m; m = re.exec(line)) keys.push({ key: m[1]!, start: m.index, valueAt: m.index + m[0].length });
    keys.forEach((k, i) => kv.set(k.key, line.slice(k.valueAt, i + 1 < keys.length ? keys[i + 1]!.start : line.length).trim()));
    const state = kv.get('JobState') ?? '';
    out.push({
      jobId: kv.get('JobId') ?? '',
      state: baseState(state),
      rawState: state,
      exit: parseExitCode(kv.get('ExitCode')),
      submitAt: epochMs(kv.get('SubmitTime')),
      startAt: epochMs(kv.get('StartTime')),
      endAt: epochMs(kv.get('EndTime')),
      reason: nonEmpty(kv.get('Reason')),
      nodes: nonEmpty(kv.get('NodeList')),
      timeLimit: nonEmpty(kv.get('TimeLimit')),
      source: 'scontrol',
    });
  }
  return out;
}

export interface Wanted {
  jobId: string;
  /** Epoch ms just before sbatch: rows submitted (clearly) earlier are another job with a reused id. */
  submittedAt: number | null;
}

/** Slack for the seconds resolution of Slurm's times and clocks that disagree a little. */
export const SUBMIT_SLACK_MS = 120_000;

/** The row for a wanted job: same id, not submitted before it; the newest if several. */
export function pick(rows: JobInfo[], w: Wanted): JobInfo | null {
  let best: JobInfo | null = null;
  for (const r of rows) {
    if (r.jobId !== w.jobId) continue;
    if (w.submittedAt !== null && r.submitAt !== null && r.submitAt < w.submittedAt - SUBMIT_SLACK_MS) continue;
    if (!best || (r.submitAt ?? 0) >= (best.submitAt ?? 0)) best = r;
  }
  return best;
}

function unique(ids: string[]): string[] {
  return [...new Set(ids)].sort((a, b) => Number(a) - Number(b));
}

/** squeue for these jobs: one call. Throws SlurmUnavailable when the controller does not answer. */
export async function squeueJobs(runner: SlurmRunner, ids: string[]): Promise<JobInfo[]> {
  if (ids.length === 0) return [];
  const r = await runner.run('squeue', ['--noheader', '--states=all', `--jobs=${unique(ids).join(',')}`, `--format=${SQUEUE_FORMAT}`]);
  if (r.code === 0) return parseSqueue(r.stdout);
  // Every id unknown to the controller: squeue says so and exits 1 (one known id is enough to succeed).
  if (/invalid job id/i.test(r.stderr)) return [];
  throw new SlurmUnavailable(`squeue: ${describeFailure('squeue', r)}`);
}

export type SacctResult = { ok: true; rows: JobInfo[] } | { ok: false; accountingOff: boolean; why: string };

export async function sacctJobs(runner: SlurmRunner, ids: string[]): Promise<SacctResult> {
  if (ids.length === 0) return { ok: true, rows: [] };
  const r: CommandResult = await runner.run('sacct', ['--noheader', '--parsable2', '--allocations', `--jobs=${unique(ids).join(',')}`, `--format=${SACCT_FIELDS}`]);
  if (r.code === 0) return { ok: true, rows: parseSacct(r.stdout) };
  const text = r.stderr + r.stdout;
  const accountingOff = /accounting storage is disabled|slurmdbd.*(not|isn't) (running|configured)|not running a supported accounting_storage plugin/i.test(text) || r.failure !== null;
  return { ok: false, accountingOff, why: describeFailure('sacct', r) };
}

/** All jobs the controller holds in memory, with exit codes (the fallback when sacct cannot answer). */
export async function scontrolJobs(runner: SlurmRunner): Promise<JobInfo[]> {
  const r = await runner.run('scontrol', ['--oneliner', 'show', 'job']);
  if (r.code === 0) return parseScontrol(r.stdout);
  if (/no jobs in the system/i.test(r.stdout + r.stderr)) return [];
  if (controllerUnreachable(r) || r.failure) throw new SlurmUnavailable(`scontrol: ${describeFailure('scontrol', r)}`);
  return [];
}
