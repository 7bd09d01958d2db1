// "Today" and "the day YYYY-MM-DD" as instants: local midnight to the next local midnight in a
// time zone, which is 23 or 25 hours away on daylight-saving days (never start + 86,400,000 ms).
// Every day window (runs of a day, status and doctor counts, the Today timeline) comes from here.
// Pure: no Node imports, so the renderer uses it too.
import { civilToWall, cycleDay, localToUtc, machineTimeZone } from './tz.js';

export interface DayBounds {
  /** YYYY-MM-DD, the local day. */
  day: string;
  /** Local midnight that starts it (epoch ms). */
  from: number;
  /** The next local midnight (epoch ms), exclusive. */
  to: number;
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Why a YYYY-MM-DD is not a real calendar day, or null when it is one. */
export function dayProblem(day: string): string | null {
  const m = DAY.exec(day);
  if (!m) return 'must be a day as YYYY-MM-DD';
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 1) return 'year must be 0001 or later';
  if (mo < 1 || mo > 12) return `month must be 01 to 12, got ${m[2]}`;
  const last = new Date(civilToWall(y, mo + 1, 0)).getUTCDate(); // day 0 of the next month: this one's last
  if (d < 1 || d > last) return `day must be 01 to ${last} in ${m[1]}-${m[2]}, got ${m[3]}`;
  return null;
}

/** Bounds of `day` (YYYY-MM-DD, validated by dayProblem first) or, without it, of the day of `now`, in `tz`. */
export function dayBounds(now: number, day?: string, tz: string = machineTimeZone()): DayBounds {
  const label = day ?? cycleDay(now, tz);
  const problem = dayProblem(label);
  if (problem) throw new RangeError(`day ${label}: ${problem}`);
  const [y, mo, d] = label.split('-').map(Number) as [number, number, number];
  const from = localToUtc({ year: y, month: mo, day: d }, tz);
  // The day after, through the calendar (the 31st rolls over to the 1st of the next month).
  const next = new Date(civilToWall(y, mo, d + 1));
  const to = localToUtc({ year: next.getUTCFullYear(), month: next.getUTCMonth() + 1, day: next.getUTCDate() }, tz);
  return { day: label, from, to };
}

/**
 * The bounds of the day of `now` in the machine's own zone, through Date's local time: the same
 * zone data as Intl (and TZ), without building an Intl formatter, whose locale data costs a CLI
 * start about 15 ms and a resident daemon megabytes. The same as dayBounds(now), DST days too.
 */
export function machineDayBounds(now: number): DayBounds {
  const d = new Date(now);
  const [y, mo, day] = [d.getFullYear(), d.getMonth(), d.getDate()];
  const yyyy = y >= 0 ? String(y).padStart(4, '0') : String(y);
  return {
    day: `${yyyy}-${String(mo + 1).padStart(2, '0')}-${String(day).padStart(2, '0')}`,
    from: new Date(y, mo, day).getTime(),
    to: new Date(y, mo, day + 1).getTime(),
  };
}
