// When does a routine run next? Pure functions of (timing, reference instant, zone): the reference
// is always passed in, never read from a clock.

import type { Timing } from '../domain/types.js';
import { parseAt } from './at.js';
import { nextMatch } from './calendar.js';
import { compileCron } from './cron.js';
import { TimingError } from './errors.js';
import { compileRuntimes } from './runtimes.js';
import { assertTimeZone } from './tz.js';

export { parseAt, resolveIn } from './at.js';
export { compileCron, validateCron } from './cron.js';
export { TimingError } from './errors.js';
export { parseRuntimes } from './runtimes.js';
export { cycleDay, instantsOfWall, localToUtc, wallTime, type LocalDateTime, type WallTime } from './tz.js';

/** Dates stop at ±8.64e15 ms; keep ten years of headroom for the search. */
const MAX_INSTANT_MS = 8.64e15 - 366 * 10 * 86_400_000;

/**
 * The next instant strictly after `afterMs` at which the timing fires in `tz`, or null if it never
 * will (an `at` in the past).
 * - at: the instant, if after the reference.
 * - every: afterMs + everyMs — the caller passes the previous attempt's completion time, so an
 *   interval loop never overlaps itself.
 * - runtimes / cron: the next matching local wall time, DST handled as Vixie cron does.
 * Throws TimingError on invalid timing, an unknown zone or a non-finite reference.
 */
export function nextRunAt(timing: Timing, afterMs: number, tz: string): number | null {
  if (typeof afterMs !== 'number' || !(Math.abs(afterMs) <= MAX_INSTANT_MS)) {
    throw new TimingError(`reference time must be a finite number of epoch milliseconds, got ${String(afterMs)}`);
  }
  assertTimeZone(tz);
  switch (timing.mode) {
    case 'at': {
      const at = parseAt(timing.at, tz);
      return at > afterMs ? at : null;
    }
    case 'every': {
      const every = timing.everyMs;
      if (!Number.isSafeInteger(every) || every <= 0) {
        throw new TimingError(`every must be a positive whole number of milliseconds, got ${String(every)}`);
      }
      return afterMs + every;
    }
    case 'runtimes':
      return nextMatch(compileRuntimes(timing.runtimes), afterMs, tz);
    case 'cron':
      return nextMatch(compileCron(timing.cron), afterMs, tz);
    default:
      throw new TimingError(`unknown timing mode ${JSON.stringify((timing as { mode?: unknown }).mode)}`);
  }
}

/** The next `count` instants after `afterMs`, each strictly after the one before. */
export function nextRuns(timing: Timing, afterMs: number, tz: string, count: number): number[] {
  if (!Number.isSafeInteger(count) || count < 0) {
    throw new TimingError(`count must be a whole number of at least 0, got ${String(count)}`);
  }
  const out: number[] = [];
  let cursor = afterMs;
  while (out.length < count) {
    const t = nextRunAt(timing, cursor, tz);
    if (t === null) break;
    out.push(t);
    cursor = t;
  }
  return out;
}
