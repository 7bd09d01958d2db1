// Typed `noun:verb` engine events → what the UI must re-read. Pure: the store applies it.
import type { EngineEvent } from '../../../contract/calls.js';

export interface Invalidation {
  /** Re-read these routines (one `routines.show` each). */
  routines: Set<string>;
  /** Definitions changed wholesale (an import): re-read the list. */
  routineList: boolean;
  /** Forget these routines (removed). */
  removed: Set<string>;
  /** Re-read these batch jobs (one `jobs.show` each). */
  jobs: Set<number>;
  /** Today's runs (the timeline). */
  runs: boolean;
  /** Daemon status and doctor findings. */
  health: boolean;
  workers: boolean;
}

export function emptyInvalidation(): Invalidation {
  return { routines: new Set(), routineList: false, removed: new Set(), jobs: new Set(), runs: false, health: false, workers: false };
}

/** Fold one event into an invalidation. */
export function invalidate(inv: Invalidation, e: EngineEvent): Invalidation {
  const [noun, verb] = e.type.split(':') as [string, string | undefined];
  switch (noun) {
    case 'routine':
      if (verb === 'removed' && e.routineId) {
        inv.removed.add(e.routineId);
        inv.routines.delete(e.routineId);
      } else if (e.routineId) inv.routines.add(e.routineId);
      inv.health = true;
      break;
    case 'schedule':
      inv.routineList = true;
      break;
    case 'run':
    case 'trigger':
      if (e.routineId) inv.routines.add(e.routineId);
      inv.runs = true;
      inv.health = true;
      break;
    case 'job':
      if (e.jobId !== null) inv.jobs.add(e.jobId);
      inv.health = true;
      inv.workers = true;
      break;
    case 'worker':
      inv.workers = true;
      inv.health = true;
      break;
    default:
      if (e.level !== 'info') inv.health = true;
  }
  return inv;
}

export function isEmpty(inv: Invalidation): boolean {
  return !inv.routines.size && !inv.routineList && !inv.removed.size && !inv.jobs.size && !inv.runs && !inv.health && !inv.workers;
}
