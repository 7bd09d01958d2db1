// The search behind cron and runtimes: the first instant strictly after a reference at which the
// local wall clock shows a scheduled minute on a scheduled day, with DST handled as Vixie cron does.
//
// - "fixed" schedules (runtimes; cron whose minute and hour fields are plain values, ranges or
//   lists): a scheduled time inside a spring-forward gap fires once, at the first instant after
//   the gap; a time inside a fall-back fold fires once, at its first occurrence.
// - "wildcard" schedules (cron whose minute or hour field holds `*` or a step): they follow the
//   wall clock — times in a gap are skipped, times in a fold fire at both occurrences — so
//   `*/30 * * * *` keeps firing every 30 real minutes through both transitions.

import { DAY_MS, MINUTE_MS, zoneDay, type ZoneDay } from './tz.js';

export interface CalendarSpec {
  /** Minutes of the local day (h*60+m) at which it fires: ascending, unique, non-empty. */
  readonly times: readonly number[];
  /** Index 1..12, true where it fires (other entries false or absent); null = every month. */
  readonly months: readonly boolean[] | null;
  /** Index 1..31; null = the field is `*`. */
  readonly daysOfMonth: readonly boolean[] | null;
  /** Index 0..6 (0 = Sunday); null = the field is `*`. */
  readonly daysOfWeek: readonly boolean[] | null;
  /** `*` or a step in the minute or hour field: follows the wall clock across DST (else a fixed time). */
  readonly wildcard: boolean;
}

/** Far enough for Feb 29 across a skipped leap year (2096 → 2104). */
const SEARCH_DAYS = 366 * 9;

export function dayMatches(spec: CalendarSpec, dayOfMonth: number, weekday: number): boolean {
  const dom = spec.daysOfMonth;
  const dow = spec.daysOfWeek;
  if (dom === null) return dow === null || dow[weekday] === true;
  if (dow === null) return dom[dayOfMonth] === true;
  // Both restricted: either may match (Vixie / POSIX).
  return dom[dayOfMonth] === true || dow[weekday] === true;
}

/** First instant > afterMs matching the spec in `tz` (which must be valid), or null. */
export function nextMatch(spec: CalendarSpec, afterMs: number, tz: string): number | null {
  // Start on the local day before afterMs's (a fold can leave that day's times still to come).
  // Offsets lie within -12h..+14h, so the local day is at least the UTC day minus one; an earlier
  // day only yields times before afterMs, which are passed over.
  const startDay = Math.floor(afterMs / DAY_MS) - 2;
  let best = Infinity;
  let lastDay = startDay + SEARCH_DAYS;
  for (let day = startDay; day <= lastDay; day++) {
    const date = new Date(day * DAY_MS);
    const month = date.getUTCMonth() + 1;
    if (spec.months !== null && spec.months[month] !== true) {
      // Jump to the last day of this month; the loop steps onto the 1st of the next.
      day = Math.floor(Date.UTC(date.getUTCFullYear(), month, 1) / DAY_MS) - 1;
      continue;
    }
    if (!dayMatches(spec, date.getUTCDate(), date.getUTCDay())) continue;
    best = Math.min(best, earliestOnDay(spec, day, zoneDay(day, tz), afterMs));
    // Once a day has a match, one more day is looked at: after an offset change a fold across
    // midnight can put the next day's first times earlier. (After a steady day nothing later can
    // win; stopping there at once saved one memoized day and was a branch no result could show.)
    if (best !== Infinity) lastDay = Math.min(lastDay, day + 1);
  }
  return best === Infinity ? null : best;
}

function earliestOnDay(spec: CalendarSpec, day: number, z: ZoneDay, afterMs: number): number {
  const times = spec.times;
  const base = day * DAY_MS;
  if (z.before === z.after) {
    const midnight = base - z.before;
    let lo = 0;
    let hi = times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (midnight + times[mid]! * MINUTE_MS > afterMs) hi = mid;
      else lo = mid + 1;
    }
    return lo < times.length ? midnight + times[lo]! * MINUTE_MS : Infinity;
  }
  // The offset changes at z.at: wall w occurs at w - before if that is before the change, and at
  // w - after if that is at or after it — both in a fold, neither in a gap.
  const wildcard = spec.wildcard;
  let best = Infinity;
  for (const t of times) {
    const wall = base + t * MINUTE_MS;
    const x0 = wall - z.before;
    const x1 = wall - z.after;
    const ok0 = x0 < z.at;
    const ok1 = x1 >= z.at;
    if (ok0 && x0 > afterMs) best = Math.min(best, x0);
    if (ok1 && (wildcard || !ok0) && x1 > afterMs) best = Math.min(best, x1);
    if (!ok0 && !ok1 && !wildcard && z.at > afterMs) best = Math.min(best, z.at);
  }
  return best;
}
