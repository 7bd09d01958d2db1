// One-shot instants: `at` as ISO 8601 (with an offset, or local to the routine's zone), and `in`
// (a duration from now) turned into an `at`.

import { parseDuration } from './duration.js';
import { TimingError } from './errors.js';
import { assertTimeZone, civilToWall, wallToInstant } from './tz.js';

// 2025-03-09, 2025-03-09T14:30, 2025-03-09 14:30:05.250, …Z, …+01:00, …+0100, …+01
const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:\s*([Zz]|[+-]\d{2}(?::?\d{2})?))?)?$/;

const EXAMPLES = 'e.g. 2025-03-09T14:30, 2025-03-09T14:30:00Z or 2025-03-09T14:30+01:00';

/**
 * Epoch ms of an ISO 8601 date-time. With an offset (or Z) it is that instant; without one it is
 * local time in `tz`: a time that occurs twice means its first occurrence, a time skipped by
 * spring-forward means the first instant after the gap. A date alone means local midnight.
 * Throws TimingError with the reason.
 */
export function parseAt(at: string, tz: string): number {
  if (typeof at !== 'string') throw new TimingError(`expected an ISO 8601 date-time string, got ${typeof at}`);
  assertTimeZone(tz);
  return parse(at.trim(), tz);
}

function parse(text: string, tz: string): number {
  if (text === '') throw new TimingError(`is empty (${EXAMPLES})`);
  const m = ISO.exec(text);
  if (!m) throw new TimingError(`${JSON.stringify(text)} is not an ISO 8601 date-time (${EXAMPLES})`);
  const [, ys, mos, ds, hs, mis, ss, frac, offset] = m;
  const year = Number(ys);
  const month = Number(mos);
  const day = Number(ds);
  const hour = hs === undefined ? 0 : Number(hs);
  const minute = mis === undefined ? 0 : Number(mis);
  const second = ss === undefined ? 0 : Number(ss);
  if (month < 1 || month > 12) throw new TimingError(`${JSON.stringify(text)}: month ${month} is out of range 01-12`);
  const monthDays = new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !isLeap(year) ? 1 : 0);
  if (day < 1 || day > monthDays) {
    throw new TimingError(`${JSON.stringify(text)}: day ${day} does not exist in ${ys}-${mos} (it has ${monthDays} days)`);
  }
  if (hour > 23) throw new TimingError(`${JSON.stringify(text)}: hour ${hour} is out of range 00-23`);
  if (minute > 59) throw new TimingError(`${JSON.stringify(text)}: minute ${minute} is out of range 00-59`);
  if (second > 59) throw new TimingError(`${JSON.stringify(text)}: second ${second} is out of range 00-59`);
  const millis = frac === undefined ? 0 : Math.round(Number(`0.${frac}`) * 1000);
  const wall = civilToWall(year, month, day, hour, minute, second) + millis;

  if (offset === undefined) return wallToInstant(wall, tz);
  // Z (or z) reads as an offset of no hours and no minutes.
  const sign = offset[0] === '-' ? -1 : 1;
  const digits = offset.slice(1).replace(':', '');
  const oh = Number(digits.slice(0, 2));
  const om = Number(digits.slice(2)); // '' (an offset of hours only) is 0
  if (oh > 23 || om > 59) throw new TimingError(`${JSON.stringify(text)}: offset ${offset} is out of range`);
  return wall - sign * (oh * 3_600_000 + om * 60_000);
}

function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

/** `in` → `at`: now + duration, as an ISO 8601 UTC string. Throws DurationError with the reason. */
export function resolveIn(inDuration: string, nowMs: number): string {
  if (!Number.isFinite(nowMs)) throw new TimingError(`reference time must be a finite number of epoch milliseconds, got ${nowMs}`);
  return new Date(nowMs + parseDuration(inDuration)).toISOString();
}
