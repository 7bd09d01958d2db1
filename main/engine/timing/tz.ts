// IANA time zones through Intl (no tz database of our own), and the wall-clock arithmetic the
// schedules need: the offset at an instant, the local date of an instant, and the instants at which
// a local wall time occurs (none in a spring-forward gap, two in a fall-back fold).
//
// A "wall" value is a local date-time encoded as if it were UTC: Date.UTC(y, mo-1, d, h, mi, s, ms).
// offset(instant) = wall(instant) - instant. Offsets are exact to the second (Intl has no
// sub-second offsets). Formatters, offsets per hour and per-day transition facts are cached,
// because nextRunAt runs for thousands of routines per pass.

import { TimingError } from './errors.js';
import { Memo } from './memo.js';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** A local calendar date and time (month 1-12). */
export interface LocalDateTime {
  year: number;
  month: number;
  day: number;
  hour?: number;
  minute?: number;
  second?: number;
  millisecond?: number;
}

/** What the wall clock in a zone reads at an instant; weekday 0 = Sunday. */
export interface WallTime extends Required<LocalDateTime> {
  weekday: number;
}

const validity = new Memo<string, boolean>(1000);

/**
 * Zones whose offset is zero at every instant, known without Intl: its first date formatter brings
 * ICU's locale and zone data into memory, some 8 MiB a daemon whose routines all run in UTC (a
 * server's usual setting) then never holds.
 */
const ALWAYS_UTC: ReadonlySet<string> = new Set(['UTC', 'Etc/UTC']);

export function isValidTimeZone(tz: string): boolean {
  if (typeof tz !== 'string') return false; // Intl would take undefined as the machine's zone
  if (ALWAYS_UTC.has(tz)) return true;
  return validity.get(tz, () => {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: tz });
      return true;
    } catch {
      return false;
    }
  });
}

export function assertTimeZone(tz: string): void {
  if (!isValidTimeZone(tz)) {
    throw new TimingError(`unknown time zone ${JSON.stringify(tz)} (use an IANA name such as Europe/Berlin or UTC)`);
  }
}

export function machineTimeZone(): string {
  return process.env.TZ && isValidTimeZone(process.env.TZ)
    ? process.env.TZ
    : Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

// ---------------------------------------------------------------------------------------------
// Exact offsets through Intl

const formatters = new Memo<string, Intl.DateTimeFormat>(1000);

function formatter(tz: string): Intl.DateTimeFormat {
  return formatters.get(
    tz,
    () =>
      new Intl.DateTimeFormat('en-US', {
        timeZone: tz,
        hourCycle: 'h23',
        era: 'short',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      }),
  );
}

/** Date.UTC that also means years 0-99 literally. */
export function civilToWall(y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0): number {
  const t = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  if (y >= 0 && y < 100) {
    const date = new Date(t);
    date.setUTCFullYear(date.getUTCFullYear() - 1900);
    return date.getTime();
  }
  return t;
}

// `format` and a pattern, not `formatToParts`: three times faster, and this is hot (twice per zone
// and hour, and every call inside an hour whose offset changes). The era is written because without
// it Intl writes 1 BC as year 1: an `at` in year 0000 would be read a year off.
const FORMATTED = /(\d{1,2})\/(\d{1,2})\/(\d{1,6}) (AD|BC), (\d{1,2}):(\d{2}):(\d{2})/;

function exactWall(ms: number, tz: string): number {
  const whole = Math.floor(ms / 1000) * 1000;
  const text = formatter(tz).format(whole);
  const m = FORMATTED.exec(text);
  if (!m) throw new TimingError(`cannot read the time in ${tz}: Intl wrote ${JSON.stringify(text)}`);
  const year = m[4] === 'BC' ? 1 - +m[3]! : +m[3]!;
  return civilToWall(year, +m[1]!, +m[2]!, +m[5]! % 24, +m[6]!, +m[7]!) + (ms - whole);
}

// Per zone: hour bucket → the offset throughout that hour, or NaN when it changes inside it.
const hourOffsets = new Memo<string, Memo<number, number>>(1000);

/** The offset of `tz` throughout the UTC hour `hour` (epoch ms / HOUR_MS), or NaN when it changes inside it. */
export function hourOffset(hour: number, tz: string): number {
  if (ALWAYS_UTC.has(tz)) return 0;
  return hourOffsets
    .get(tz, () => new Memo(20_000))
    .get(hour, () => {
      const start = hour * HOUR_MS;
      const end = start + HOUR_MS - 1;
      const o0 = exactWall(start, tz) - start;
      return o0 === exactWall(end, tz) - end ? o0 : NaN;
    });
}

/** Offset of `tz` from UTC at the instant, in ms (UTC+2 → 7_200_000). `tz` must be valid. */
export function offsetAt(ms: number, tz: string): number {
  const o = hourOffset(Math.floor(ms / HOUR_MS), tz);
  return Number.isNaN(o) ? exactWall(ms, tz) - ms : o;
}

// ---------------------------------------------------------------------------------------------
// Per local day: the offset before and after, and the instant it changes, if it does.

/**
 * Offset facts around one local day (day = floor(wall / DAY_MS)). `before` holds up to `at`,
 * `after` from `at` on; when they are equal `at` is NaN and the day is steady. The window examined
 * covers every instant any wall time of that day can map to (offsets are within -12h..+14h), so on
 * a steady day wall → instant is simply wall - before. Assumes at most one offset change within
 * ~52 hours, which holds for every real zone since 1970.
 */
export interface ZoneDay {
  before: number;
  after: number;
  at: number;
}

const WINDOW_BEFORE_MS = 15 * HOUR_MS;
const WINDOW_AFTER_MS = 13 * HOUR_MS;
const zoneDays = new Memo<string, Memo<number, ZoneDay>>(1000);

export function zoneDay(day: number, tz: string): ZoneDay {
  return zoneDays
    .get(tz, () => new Memo(20_000))
    .get(day, () => {
      const lo = day * DAY_MS - WINDOW_BEFORE_MS;
      const hi = (day + 1) * DAY_MS + WINDOW_AFTER_MS;
      const before = offsetAt(lo, tz);
      const after = offsetAt(hi, tz);
      return { before, after, at: before === after ? NaN : firstChange(lo, hi, before, tz) };
    });
}

/** The first whole second in (lo, hi] whose offset is no longer `before`. */
function firstChange(lo: number, hi: number, before: number, tz: string): number {
  let a = Math.floor(lo / 1000);
  let b = Math.ceil(hi / 1000);
  while (b - a > 1) {
    const mid = Math.floor((a + b) / 2);
    if (offsetAt(mid * 1000, tz) === before) a = mid;
    else b = mid;
  }
  return b * 1000;
}

/**
 * The instants at which the wall clock in `tz` reads `wall`: one normally, two (ascending) in a
 * fall-back fold, none in a spring-forward gap (then `gapEnd` is the first instant after the gap).
 */
export function instantsOfWall(wall: number, tz: string): { instants: number[]; gapEnd: number | null } {
  assertTimeZone(tz);
  const z = zoneDay(Math.floor(wall / DAY_MS), tz);
  const x0 = wall - z.before;
  if (z.before === z.after) return { instants: [x0], gapEnd: null };
  const x1 = wall - z.after;
  const instants: number[] = [];
  if (x0 < z.at) instants.push(x0);
  if (x1 >= z.at) instants.push(x1); // in a fold (offset falls) x0 < x1: ascending already
  return { instants, gapEnd: instants.length === 0 ? z.at : null };
}

/**
 * The instant of a local wall time, the way Vixie cron treats a fixed time across DST: a time that
 * occurs twice (fall back) means its first occurrence; a time that does not exist (spring forward)
 * means the first instant after the gap (02:30 on the skipped night → 03:00 new time).
 */
export function wallToInstant(wall: number, tz: string): number {
  const { instants, gapEnd } = instantsOfWall(wall, tz);
  return instants.length > 0 ? instants[0]! : gapEnd!;
}

/** `localToUtc({year:2025, month:3, day:9, hour:2, minute:30}, 'America/New_York')` → 03:00 EDT. */
export function localToUtc(local: LocalDateTime, tz: string): number {
  assertTimeZone(tz);
  const wall = civilToWall(
    local.year,
    local.month,
    local.day,
    local.hour ?? 0,
    local.minute ?? 0,
    local.second ?? 0,
    local.millisecond ?? 0,
  );
  if (!Number.isFinite(wall)) throw new TimingError(`invalid local date-time ${JSON.stringify(local)}`);
  return wallToInstant(wall, tz);
}

/** What the wall clock in `tz` reads at the instant. */
export function wallTime(ms: number, tz: string): WallTime {
  assertTimeZone(tz);
  const d = new Date(ms + offsetAt(ms, tz));
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    millisecond: d.getUTCMilliseconds(),
    weekday: d.getUTCDay(),
  };
}

/** The local calendar day (YYYY-MM-DD) of an instant in `tz` — the run's cycle. */
export function cycleDay(ms: number, tz: string): string {
  if (!Number.isFinite(ms)) throw new TimingError(`instant must be a finite number of epoch milliseconds, got ${ms}`);
  assertTimeZone(tz);
  const d = new Date(ms + offsetAt(ms, tz));
  const y = d.getUTCFullYear();
  const yyyy = y >= 0 ? String(y).padStart(4, '0') : String(y);
  return `${yyyy}-${String(d.getUTCMonth() + 1).padStart(2, '0')}-${String(d.getUTCDate()).padStart(2, '0')}`;
}
