// WAITING batch jobs whose dependencies all COMPLETED move to PENDING; a job whose dependency
// ended ERROR or CANCEL is cancelled with a reason naming that dependency (and so on downstream).
import type { Ctx } from './context.js';
import { moveJob } from './moves.js';

export function promoteJobs(ctx: Ctx, now: number): number {
  const waiting = ctx.store.jobs.idsWithStatus('WAITING');
  if (waiting.length === 0) return 0;
  let moved = 0;
  ctx.tx(() => {
    // Cancellation cascades within one pass: keep going while something changed.
    let changed = true;
    const open = new Set(waiting);
    while (changed) {
      changed = false;
      for (const id of open) {
        const deps = ctx.store.jobs.dependencyStatuses(id);
        const dead = deps.find((d) => d.status === 'ERROR' || d.status === 'CANCEL');
        if (dead) {
          if (moveJob(ctx.store, id, 'dep_failed', { reason: `dependency job ${dead.id} ended ${dead.status}`, endedAt: now }, now)) {
            ctx.log({ type: 'job:cancelled', level: 'warn', jobId: id, message: `job ${id} cancelled: dependency job ${dead.id} ended ${dead.status}` });
            moved++;
            changed = true;
          }
          open.delete(id);
        } else if (deps.every((d) => d.status === 'COMPLETED')) {
          if (moveJob(ctx.store, id, 'ready', {}, now)) {
            ctx.log({ type: 'job:pending', jobId: id, message: `job ${id} ready: dependencies completed` });
            moved++;
          }
          open.delete(id);
        }
      }
    }
  });
  return moved;
}
