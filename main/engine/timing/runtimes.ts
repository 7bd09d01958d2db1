// Runtimes: a daily list of local HH:MM times ("07:00,19:30"). They are fixed times: across DST
// each fires once a day (see calendar.ts).

import type { CalendarSpec } from './calendar.js';
import { TimingError } from './errors.js';

const HHMM = /^(\d{1,2}):(\d{2})$/;

/**
 * "07:00,19:30", "7:00, 19:30" or ["19:30", "07:00"] → ["07:00", "19:30"]: validated (00:00-23:59),
 * zero-padded, sorted, deduplicated. Throws TimingError naming the bad entry.
 */
export function parseRuntimes(input: string | readonly string[]): string[] {
  let items: string[];
  if (typeof input === 'string') items = input.split(',');
  else if (Array.isArray(input)) {
    items = [];
    for (const entry of input as readonly unknown[]) {
      if (typeof entry !== 'string') throw new TimingError(`expected HH:MM strings, got ${typeof entry}`);
      items.push(...entry.split(','));
    }
  } else throw new TimingError(`expected "HH:MM,HH:MM" or a list of HH:MM, got ${typeof input}`);

  const minutes = new Set<number>();
  for (const raw of items) {
    const item = raw.trim();
    if (item === '') {
      if (items.length === 1) break;
      throw new TimingError(`empty entry in ${JSON.stringify(typeof input === 'string' ? input : input.join(','))}`);
    }
    const m = HHMM.exec(item);
    if (!m) throw new TimingError(`"${item}" is not a time of day (use HH:MM, 00:00 to 23:59)`);
    const h = Number(m[1]);
    const min = Number(m[2]);
    if (h > 23) throw new TimingError(`"${item}": hour ${h} is out of range 00-23`);
    if (min > 59) throw new TimingError(`"${item}": minute ${min} is out of range 00-59`);
    minutes.add(h * 60 + min);
  }
  if (minutes.size === 0) throw new TimingError('no times given (use HH:MM, e.g. 07:00,19:30)');
  return [...minutes].sort((a, b) => a - b).map(formatMinute);
}

function formatMinute(t: number): string {
  return `${String(Math.floor(t / 60)).padStart(2, '0')}:${String(t % 60).padStart(2, '0')}`;
}

/** The runtimes as a calendar spec; throws TimingError on bad input. Cheap: a few short strings. */
export function compileRuntimes(runtimes: readonly string[]): CalendarSpec {
  const times = parseRuntimes(runtimes).map((s) => Number(s.slice(0, 2)) * 60 + Number(s.slice(3)));
  return { times, months: null, daysOfMonth: null, daysOfWeek: null, wildcard: false };
}
