// What a finished batch run means for its trigger: one-shots become fired or failed, `every`
// loops compute their next time from the completion, failures keep their metadata, and the
// routine's retry policy may queue another attempt.
import { newRun } from '../domain/run.js';
import type { RoutineDef } from '../domain/types.js';
import type { NewEvent } from '../store/events.js';
import type { SettlingRun } from '../store/runs.js';
import type { Store } from '../store/store.js';
import { nextRunAt } from '../timing/next.js';
import { moveTrigger } from './moves.js';

export function finalizeBatch(store: Store, log: (e: NewEvent) => void, run: SettlingRun, def: RoutineDef | null, success: boolean, reason: string | null, now: number): void {
  // Only a batch routine has a timing (the schema requires one there and refuses one on a realtime
  // routine), so a routine removed, or one now realtime, ends here.
  if (!def?.timing) return;
  const timing = def.timing;
  // A manual run's success changes nothing, nor does a plain recurring routine's (cron, runtimes)
  // unless a failure left retry state to reset: one look at that, not at the whole trigger.
  if (success && (run.manual || (timing.mode !== 'at' && timing.mode !== 'every' && !store.routines.hasRetryState(def.id)))) return;
  const t = store.routines.trigger(def.id);
  if (!t) return;
  // An `every` loop is armed from the end of its run, unless an edit armed it meanwhile or it is
  // paused (resuming arms it).
  const rearm = !run.manual && timing.mode === 'every' && t.state === 'scheduled' && t.nextRunAt === null ? nextRunAt(timing, now, def.tz) : undefined;

  if (success) {
    const once = timing.mode === 'at';
    // A plain recurring routine's success changes nothing: no write.
    if (!once && rearm === undefined && t.attempts === 0 && t.firstDueAt === null) return;
    moveTrigger(store, t, once ? 'succeed_once' : 'succeed_recurring', { attempts: 0, firstDueAt: null, nextRunAt: rearm }, now);
    return;
  }

  const failed = { lastError: reason, lastErrorAt: now, failCount: t.failCount + 1, attempts: t.attempts + 1 };
  const retryAt = now + def.retry.delayMs;
  const firstDue = run.scheduledAt;
  const retryable = def.retry.delayMs > 0 && retryAt <= firstDue + def.retry.windowMs;
  if (retryable && t.state === 'scheduled') {
    if (!moveTrigger(store, t, 'fail_retry', failed, now)) return;
    const retry = newRun(def, run.scheduledAt, now, { attempt: run.attempt + 1, manual: run.manual, notBefore: retryAt, cycle: run.cycle });
    store.runs.insert(retry);
    log({
      type: 'run:retry',
      routineId: def.id,
      runId: retry.id,
      message: `attempt ${retry.attempt} at ${new Date(retryAt).toISOString()} (retry every ${def.retry.delayMs / 1000}s until ${new Date(firstDue + def.retry.windowMs).toISOString()})`,
    });
    return;
  }
  // No retry is queued: the window is over, or the trigger is paused (a pause holds back new
  // attempts, retries included). A run started by hand does not end a one-shot.
  const event = retryable ? 'fail_retry' : run.manual || timing.mode !== 'at' ? 'fail_recurring' : 'fail_exhausted';
  moveTrigger(store, t, event, { ...failed, firstDueAt: null, nextRunAt: rearm }, now);
}
