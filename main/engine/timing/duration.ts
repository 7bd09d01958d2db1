// Durations as people write them: `500ms`, `30m`, `5 minutes`, `2h`, `1.5d`. Positive, rounded
// to whole milliseconds. Every rejection says why.

const UNITS: Record<string, number> = {
  ms: 1, msec: 1, msecs: 1, millisecond: 1, milliseconds: 1,
  s: 1000, sec: 1000, secs: 1000, second: 1000, seconds: 1000,
  m: 60_000, min: 60_000, mins: 60_000, minute: 60_000, minutes: 60_000,
  h: 3_600_000, hr: 3_600_000, hrs: 3_600_000, hour: 3_600_000, hours: 3_600_000,
  d: 86_400_000, day: 86_400_000, days: 86_400_000,
};

const PATTERN = /^([+-]?\d+(?:\.\d+)?|[+-]?\.\d+)\s*([a-z]+)$/i;

export class DurationError extends Error {}

export function parseDuration(input: string | number): number {
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) throw new DurationError('must be a finite number of milliseconds');
    if (input <= 0) throw new DurationError('must be positive');
    const ms = Math.round(input);
    if (ms < 1) throw new DurationError('rounds to zero milliseconds');
    return ms;
  }
  const text = String(input).trim();
  if (text === '') throw new DurationError('is empty');
  const m = PATTERN.exec(text);
  if (!m) {
    throw new DurationError(`"${text}" is not a duration (use a number and a unit: 500ms, 30s, 5m, 2h, 1d)`);
  }
  const value = Number(m[1]);
  const unit = UNITS[m[2]!.toLowerCase()];
  if (unit === undefined) throw new DurationError(`unknown unit "${m[2]}" (use ms, s, m, h or d)`);
  if (value <= 0) throw new DurationError('must be positive');
  const ms = Math.round(value * unit);
  if (ms < 1) throw new DurationError('rounds to zero milliseconds');
  if (!Number.isSafeInteger(ms)) throw new DurationError('is too large');
  return ms;
}

/** Shortest exact form: 90000 → "90s", 3600000 → "1h". */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
