// Durations as people write them: `500ms`, `30s`, `5 minutes`, `2h`, `1.5d`, and sums of those
// (`1h30m`, `1h 30m`). Positive, rounded to whole milliseconds. Every rejection says why, phrased
// to follow the word "duration" (e.g. "duration must be positive").

import { TimingError } from './errors.js';

const UNITS: Record<string, number> = {
  ms: 1, msec: 1, msecs: 1, millisecond: 1, milliseconds: 1,
  s: 1000, sec: 1000, secs: 1000, second: 1000, seconds: 1000,
  m: 60_000, min: 60_000, mins: 60_000, minute: 60_000, minutes: 60_000,
  h: 3_600_000, hr: 3_600_000, hrs: 3_600_000, hour: 3_600_000, hours: 3_600_000,
  d: 86_400_000, day: 86_400_000, days: 86_400_000,
};

/** One `<number><unit>` term; terms may be separated by spaces. */
const TERM = /(\d+(?:\.\d+)?|\.\d+)\s*([a-z]+)\s*/iy;

export class DurationError extends TimingError {
  override name = 'DurationError';
}

export function parseDuration(input: string | number): number {
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) throw new DurationError('must be a finite number of milliseconds');
    if (input <= 0) throw new DurationError(`must be positive, got ${input}`);
    return checked(Math.round(input));
  }
  if (typeof input !== 'string') throw new DurationError(`must be a string such as "30m", got ${typeof input}`);
  const text = input.trim();
  if (text === '') throw new DurationError('is empty (use a number and a unit: 500ms, 30s, 5m, 2h or 1d)');

  // No unit begins with "e", so a digit, "e", a digit is an exponent wherever it stands (`1h 1e3ms`).
  if (/\de[+-]?\d/i.test(text)) {
    throw new DurationError(`"${text}" uses an exponent: a duration is a number and a unit (500ms, 30s, 5m, 2h, 1d, or sums such as 1h30m)`);
  }
  let rest = text;
  const negative = rest[0] === '-';
  if (negative || rest[0] === '+') rest = rest.slice(1).trimStart();
  let total = 0;
  let terms = 0;
  TERM.lastIndex = 0;
  while (TERM.lastIndex < rest.length) {
    const at = TERM.lastIndex;
    const m = TERM.exec(rest);
    if (!m) {
      if (/^[\d.]+$/.test(rest)) {
        throw new DurationError(`"${text}" has no unit (use ms, s, m, h or d, e.g. ${rest}s)`);
      }
      const where = terms > 0 ? `, cannot read "${rest.slice(at)}"` : '';
      throw new DurationError(`"${text}" is not a number with a unit${where} (use 500ms, 30s, 5m, 2h or 1d)`);
    }
    const unit = UNITS[m[2]!.toLowerCase()];
    if (unit === undefined) throw new DurationError(`"${text}" has an unknown unit "${m[2]}" (use ms, s, m, h or d)`);
    total += Number(m[1]) * unit;
    terms++;
  }
  if (negative || total === 0) throw new DurationError(`must be positive, got "${text}"`);
  return checked(Math.round(total));
}

function checked(ms: number): number {
  if (ms < 1) throw new DurationError('rounds to zero milliseconds');
  if (!Number.isSafeInteger(ms)) throw new DurationError('is too large');
  return ms;
}

/** Shortest exact form: 90000 → "90s", 3600000 → "1h", 5400000 → "90m". */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
