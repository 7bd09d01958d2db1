// One day-bounds function for every "today" window: local midnight to the next local midnight,
// 23 hours on the spring-forward day and 25 on the fall-back day, in three zones; and a day that
// is not on the calendar is refused, saying why.
import { describe, expect, it } from 'vitest';
import { dayBounds, dayProblem, machineDayBounds } from '../../../main/engine/timing/day.js';

const H = 3_600_000;

const ZONES = [
  { tz: 'Europe/Paris', spring: '2026-03-29', autumn: '2026-10-25', springFrom: '2026-03-28T23:00:00.000Z', autumnFrom: '2026-10-24T22:00:00.000Z' },
  { tz: 'America/New_York', spring: '2026-03-08', autumn: '2026-11-01', springFrom: '2026-03-08T05:00:00.000Z', autumnFrom: '2026-11-01T04:00:00.000Z' },
  { tz: 'Australia/Sydney', spring: '2026-10-04', autumn: '2026-04-05', springFrom: '2026-10-03T14:00:00.000Z', autumnFrom: '2026-04-04T13:00:00.000Z' },
];

describe.each(ZONES)('$tz', (z) => {
  it(`spring day ${z.spring} is 23 hours, from local midnight`, () => {
    const b = dayBounds(0, z.spring, z.tz);
    expect(new Date(b.from).toISOString()).toBe(z.springFrom);
    expect(b.to - b.from).toBe(23 * H);
  });

  it(`autumn day ${z.autumn} is 25 hours, from local midnight`, () => {
    const b = dayBounds(0, z.autumn, z.tz);
    expect(new Date(b.from).toISOString()).toBe(z.autumnFrom);
    expect(b.to - b.from).toBe(25 * H);
  });

  it("today, late on the autumn day, is that day, and ends at the next day's midnight", () => {
    const autumn = dayBounds(0, z.autumn, z.tz);
    const late = autumn.to - 1;
    const b = dayBounds(late, undefined, z.tz);
    expect(b).toEqual(autumn);
    expect(dayBounds(autumn.to, undefined, z.tz).from).toBe(autumn.to);
  });
});

it('an ordinary day is 24 hours, across a month and a year end', () => {
  expect(dayBounds(0, '2026-12-31', 'UTC')).toEqual({ day: '2026-12-31', from: Date.UTC(2026, 11, 31), to: Date.UTC(2027, 0, 1) });
  expect(dayBounds(0, '2028-02-28', 'UTC').to).toBe(Date.UTC(2028, 1, 29));
  expect(dayBounds(0, '2026-02-28', 'UTC').to).toBe(Date.UTC(2026, 2, 1));
});

it('days not on the calendar say why', () => {
  expect(dayProblem('2024-13-45')).toBe('month must be 01 to 12, got 13');
  expect(dayProblem('0000-00-00')).toBe('year must be 0001 or later');
  expect(dayProblem('2024-02-30')).toBe('day must be 01 to 29 in 2024-02, got 30');
  expect(dayProblem('2023-02-29')).toBe('day must be 01 to 28 in 2023-02, got 29');
  expect(dayProblem('2024-1-5')).toBe('must be a day as YYYY-MM-DD');
  expect(dayProblem('2024-02-29')).toBeNull();
  expect(() => dayBounds(0, '2024-02-30', 'UTC')).toThrow(/2024-02-30/);
});

it('the first month, the first day and the year 0001 are on the calendar; month 00 and day 00 are not', () => {
  expect([dayProblem('0001-01-01'), dayProblem('2026-01-01'), dayProblem('2026-12-31')]).toEqual([null, null, null]);
  expect(dayProblem('2026-00-10')).toBe('month must be 01 to 12, got 00');
  expect(dayProblem('2026-01-00')).toBe('day must be 01 to 31 in 2026-01, got 00');
  expect(dayProblem('2026-04-31')).toBe('day must be 01 to 30 in 2026-04, got 31');
});

it('29 February is a day in leap years only: every fourth year, but not 1900 or 2100, yet 2000 and 0400', () => {
  const feb29 = (y: string) => dayProblem(`${y}-02-29`);
  expect([feb29('2024'), feb29('2000'), feb29('0400'), feb29('0004')]).toEqual([null, null, null, null]);
  expect([feb29('1900'), feb29('2100'), feb29('0100'), feb29('2023')]).toEqual(
    ['1900', '2100', '0100', '2023'].map((y) => `day must be 01 to 28 in ${y}-02, got 29`),
  );
});

// machine-day.test.ts switches TZ per case, which worker threads (the mutation run's) cannot do;
// this one holds in whatever zone the process runs in.
describe('machineDayBounds in the zone Date uses', () => {
  it('equals dayBounds for that zone every 7 h 0 m 17 s over three years', () => {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    let checked = 0;
    for (let t = Date.UTC(2023, 0, 1); t < Date.UTC(2026, 0, 1); t += 7 * H + 17_000) {
      expect(machineDayBounds(t)).toEqual(dayBounds(t, undefined, zone));
      checked++;
    }
    expect(checked).toBeGreaterThan(3000);
  });
});

describe('machineDayBounds labels', () => {
  // Local noon on 15 June of a year (setFullYear: Date.UTC and new Date(y, …) read 0-99 as 1900-1999).
  const juneNoon = (year: number): number => {
    const d = new Date(2000, 5, 15, 12);
    d.setFullYear(year);
    return d.getTime();
  };

  it('pads a year to four digits, year 0 too; a year before it keeps its sign unpadded', () => {
    expect(machineDayBounds(juneNoon(5)).day).toBe('0005-06-15');
    expect(machineDayBounds(juneNoon(0)).day).toBe('0000-06-15');
    expect(machineDayBounds(juneNoon(-1)).day).toBe('-1-06-15');
  });
});

describe('dayProblem reads the whole text', () => {
  it('refuses a day with anything before or after it', () => {
    expect(dayProblem(' 2026-01-05')).toBe('must be a day as YYYY-MM-DD');
    expect(dayProblem('2026-01-05T00:00')).toBe('must be a day as YYYY-MM-DD');
  });
});
