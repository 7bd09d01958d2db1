// Stopping a Slurm job with scancel, TERM first and the rest after the grace period: a queued job
// is removed at once; a running one gets TERM on every one of its processes (`--signal=TERM
// --full`: the batch script, run.sh and the routine), and if it has not ended when the grace
// period is over, a plain scancel (Slurm's own TERM, KillWait, KILL). Resolves once Slurm says
// the job is over. cancel.json records the request, so fetch reports `cancelled (…)`.
import { setTimeout as delay } from 'node:timers/promises';
import { TendError } from '../../main/engine/errors.js';
import { readCancelRecord, readSentinel, writeCancelRecord } from '../jobdir/jobdir.js';
import { describeFailure, type SlurmRunner } from './commands.js';
import type { SlurmHandle } from './handle.js';
import { pick, squeueJobs } from './query.js';
import { phaseOf, type Phase } from './states.js';

const POLL_MS = 250;
/** After the final scancel: Slurm's KillWait plus slack for a busy controller. */
const FINAL_DEADLINE_MS = 120_000;

async function phase(runner: SlurmRunner, h: SlurmHandle): Promise<Phase | 'gone'> {
  const info = pick(await squeueJobs(runner, [h.jobId!]), { jobId: h.jobId!, submittedAt: h.submittedAt });
  if (!info) return 'gone';
  return phaseOf(info.state) ?? 'running';
}

async function scancel(runner: SlurmRunner, args: string[]): Promise<void> {
  const r = await runner.run('scancel', args);
  // A job that ended meanwhile is not an error ("Job/step already completing or completed").
  if (r.code !== 0 && !/already completing or completed|invalid job id/i.test(r.stderr)) throw new TendError('UNAVAILABLE', `scancel failed: ${describeFailure('scancel', r)}`);
}

async function until(cond: () => Promise<boolean>, deadline: number): Promise<boolean> {
  for (;;) {
    if (await cond()) return true;
    if (Date.now() >= deadline) return false;
    await delay(POLL_MS);
  }
}

export async function cancelSlurmJob(runner: SlurmRunner, h: SlurmHandle, graceMs: number): Promise<void> {
  if (h.jobId === null) return; // never reached Slurm as far as anyone knows
  const first = await phase(runner, h);
  if (first === 'gone' || first === 'over') return;
  if (readCancelRecord(h.runDir) === null) writeCancelRecord(h.runDir, { requestedAt: Date.now(), graceMs, signal: 'TERM' });
  const over = async () => {
    const p = await phase(runner, h);
    return p === 'gone' || p === 'over';
  };

  if (first === 'queued') {
    await scancel(runner, [h.jobId]);
  } else {
    await scancel(runner, ['--signal=TERM', '--full', h.jobId]);
    // Over when Slurm says so; the sentinel alone means the routine is gone and the script exiting.
    const stopped = await until(async () => readSentinel(h.runDir) !== null || (await over()), Date.now() + Math.max(0, graceMs));
    if (!stopped) {
      writeCancelRecord(h.runDir, { ...(readCancelRecord(h.runDir) ?? { requestedAt: Date.now(), graceMs }), signal: 'KILL' });
      await scancel(runner, [h.jobId]);
    }
  }
  if (!(await until(over, Date.now() + FINAL_DEADLINE_MS))) {
    throw new TendError('UNAVAILABLE', `Slurm job ${h.jobId} was not over ${FINAL_DEADLINE_MS} ms after scancel`);
  }
}
