// Slurm job states, as squeue (%T), sacct (State) and scontrol (JobState=) print them, and what
// each means to Tend: still queued, running, or over (and if over, how to say why).

export type Phase = 'queued' | 'running' | 'over';

const QUEUED = new Set(['PENDING', 'CONFIGURING', 'REQUEUED', 'REQUEUE_HOLD', 'REQUEUE_FED', 'RESV_DEL_HOLD', 'SPECIAL_EXIT', 'POWER_UP_NODE']);
// COMPLETING: the batch script has ended and the node is cleaning up; the final state (COMPLETED,
// TIMEOUT …) is not printed yet, so it counts as running until the next look.
const RUNNING = new Set(['RUNNING', 'COMPLETING', 'SUSPENDED', 'STOPPED', 'SIGNALING', 'STAGE_OUT', 'RESIZING', 'UPDATE_DB']);
const OVER = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT', 'NODE_FAIL', 'OUT_OF_MEMORY', 'PREEMPTED', 'BOOT_FAIL', 'DEADLINE', 'REVOKED']);

/** `CANCELLED by 0` → `CANCELLED`; `CANCELLED+` → `CANCELLED`. */
export function baseState(state: string): string {
  return (state.trim().split(/\s+/)[0] ?? '').replace(/\+$/, '').toUpperCase();
}

export function phaseOf(state: string): Phase | null {
  const s = baseState(state);
  if (QUEUED.has(s)) return 'queued';
  if (RUNNING.has(s)) return 'running';
  if (OVER.has(s)) return 'over';
  return null;
}

/** What an end state says beyond the exit code (null for COMPLETED and FAILED: the exit code tells). */
export const STATE_MEANING: Record<string, string> = {
  CANCELLED: 'cancelled in Slurm',
  TIMEOUT: 'time limit reached',
  NODE_FAIL: 'the node running it failed',
  OUT_OF_MEMORY: 'out of memory',
  PREEMPTED: 'preempted by another job',
  BOOT_FAIL: 'the node failed to boot',
  DEADLINE: 'deadline reached before it could run',
  REVOKED: 'revoked (a sibling cluster of the federation ran it)',
};

/** Slurm's ExitCode `code:signal` → its parts. */
export function parseExitCode(text: string | undefined): { code: number; signal: number } | null {
  const m = /^(\d+):(\d+)$/.exec((text ?? '').trim());
  return m ? { code: Number(m[1]), signal: Number(m[2]) } : null;
}
