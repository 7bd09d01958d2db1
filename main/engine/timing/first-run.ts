// A routine's first run instant on a given local day: where the daily order places it.
import type { DepRoutine } from '../graph/dependencies.js';
import { cycleDay, localToUtc, nextRunAt } from './next.js';

// Unanchored: the answer must fall on `day` itself (cycleDay below), which refuses any other text.
const DAY = /(\d{4})-(\d{2})-(\d{2})/;
const HHMM = /^([01]\d|2[0-3]):[0-5]\d$/;

/**
 * The default resolver of dailyOrder(): the routine's first run time on that local day, by the
 * same rules as the scheduler (timing/next.ts, DST included); null for `every` loops (no fixed
 * time), realtime routines, malformed timings or unknown zones.
 */
export function defaultFirstRunAt(r: DepRoutine, day: string): number | null {
  const t = r.timing;
  const d = DAY.exec(day);
  if (t === null || t.mode === 'every' || !d) return null;
  if (t.mode === 'runtimes') {
    // Stored definitions are validated; tolerate hand-made ones by skipping what is not HH:MM.
    // None left is null too: nextRunAt refuses an empty list, and the refusal reads as null below.
    const ok = t.runtimes.filter((x) => HHMM.test(x));
    if (ok.length !== t.runtimes.length) return defaultFirstRunAt({ ...r, timing: { mode: 'runtimes', runtimes: ok } }, day);
  }
  try {
    const start = localToUtc({ year: Number(d[1]), month: Number(d[2]), day: Number(d[3]) }, r.tz);
    // A stored `at` is a UTC instant (schema.ts writes it with toISOString): nextRunAt reads it as is.
    const first = nextRunAt(t, start - 1, r.tz);
    return first !== null && cycleDay(first, r.tz) === day ? first : null;
  } catch {
    return null;
  }
}
