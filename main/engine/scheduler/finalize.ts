// What a finished batch run means for its trigger: one-shots become fired or failed, `every`
// loops compute their next time from the completion, failures keep their metadata, and the
// routine's retry policy may queue another attempt.
import { newRun } from '../domain/run.js';
import type { RoutineDef, RunRow } from '../domain/types.js';
import type { NewEvent } from '../store/events.js';
import type { Store } from '../store/store.js';
import { nextRunAt } from '../timing/next.js';

export function finalizeBatch(store: Store, log: (e: NewEvent) => void, run: RunRow, def: RoutineDef | null, success: boolean, reason: string | null, now: number): void {
  if (!def || def.kind !== 'batch') return;
  const t = store.routines.trigger(def.id);
  if (!t) return;
  const timing = def.timing;

  if (success) {
    if (run.manual) return;
    const next = { ...t, attempts: 0, firstDueAt: null };
    if (timing?.mode === 'at') next.state = 'fired';
    if (timing?.mode === 'every' && t.state === 'scheduled' && t.nextRunAt === null) next.nextRunAt = nextRunAt(timing, now, def.tz);
    if (next.state !== t.state || next.nextRunAt !== t.nextRunAt || t.attempts !== 0 || t.firstDueAt !== null) store.routines.saveTrigger(next, now);
    return;
  }

  const failed = {
    ...t,
    lastError: reason,
    lastErrorAt: now,
    failCount: t.failCount + 1,
    attempts: t.attempts + 1,
  };
  const retryAt = now + def.retry.delayMs;
  const firstDue = run.scheduledAt;
  if (def.retry.delayMs > 0 && retryAt <= firstDue + def.retry.windowMs && t.state === 'scheduled') {
    store.routines.saveTrigger(failed, now);
    const retry = newRun(def, run.scheduledAt, now, { attempt: run.attempt + 1, manual: run.manual, notBefore: retryAt, cycle: run.cycle });
    store.runs.insert(retry);
    log({
      type: 'run:retry',
      level: 'warn',
      routineId: def.id,
      runId: retry.id,
      message: `attempt ${retry.attempt} at ${new Date(retryAt).toISOString()} (retry every ${def.retry.delayMs / 1000}s until ${new Date(firstDue + def.retry.windowMs).toISOString()})`,
    });
    return;
  }
  if (!run.manual) {
    if (timing?.mode === 'at' && t.state === 'scheduled') failed.state = 'failed';
    if (timing?.mode === 'every' && t.state === 'scheduled' && t.nextRunAt === null) failed.nextRunAt = nextRunAt(timing, now, def.tz);
  }
  failed.firstDueAt = null;
  store.routines.saveTrigger(failed, now);
}
