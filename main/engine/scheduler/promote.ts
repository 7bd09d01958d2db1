// WAITING batch jobs whose dependencies all COMPLETED move to PENDING; a job whose dependency
// ended ERROR or CANCEL is cancelled with a reason naming that dependency (and so on downstream).
import type { Ctx } from './context.js';
import { moveJob } from './moves.js';

export function promoteJobs(ctx: Ctx, now: number): void {
  const waiting = ctx.store.jobs.idsWithStatus('WAITING');
  if (waiting.length === 0) return;
  ctx.events.tx(() => {
    // One sweep in id order cascades: a job depends only on jobs that existed when it was posted,
    // so its dependencies have lower ids and were settled earlier in this sweep.
    for (const id of waiting) {
      const deps = ctx.store.jobs.dependencyStatuses(id);
      const dead = deps.find((d) => d.status === 'ERROR' || d.status === 'CANCEL');
      if (dead) {
        if (moveJob(ctx.store, id, 'dep_failed', { reason: `dependency job ${dead.id} ended ${dead.status}`, endedAt: now }, now)) {
          ctx.events.log({ type: 'job:cancelled', jobId: id, message: `job ${id} cancelled: dependency job ${dead.id} ended ${dead.status}` });
        }
      } else if (deps.every((d) => d.status === 'COMPLETED')) {
        if (moveJob(ctx.store, id, 'ready', {}, now)) {
          ctx.events.log({ type: 'job:pending', jobId: id, message: `job ${id} ready: dependencies completed` });
        }
      }
    }
  });
}
