import { CronExpressionParser } from 'cron-parser';
import { describe, expect, it } from 'vitest';
import { compileCron, nextRunAt, nextRuns, validateCron } from '../../../main/engine/timing/next.js';

const utc = (iso: string): number => Date.parse(iso);
const iso = (ms: number): string => new Date(ms).toISOString();
const runs = (cron: string, after: string, count: number, tz = 'UTC'): string[] =>
  nextRuns({ mode: 'cron', cron }, utc(after), tz, count).map(iso);

describe('validateCron', () => {
  it.each([
    '* * * * *',
    '*/15 9-17 * * 1-5',
    '0 0 1,15 * *',
    '0 12 * jan-mar MON',
    '0 0 * * 7',
    '0 0 * * 5-7',
    '5/15 * * * *',
    '  0   0 * * *  ',
    '0 0 31 4 1',
  ])('accepts %j', (expr) => {
    expect(validateCron(expr)).toBeNull();
  });

  it.each([
    ['', /is empty/],
    ['* * * *', /^expected 5 fields, got 4/],
    ['0 * * * * *', /^expected 5 fields, got 6/],
    ['60 * * * *', /^minute: 60 is out of range 0-59$/],
    ['* 24 * * *', /^hour: 24 is out of range 0-23$/],
    ['* * 0 * *', /^day-of-month: 0 is out of range 1-31$/],
    ['* * 32 * *', /^day-of-month: 32 is out of range 1-31$/],
    ['* * * 13 *', /^month: 13 is out of range 1-12$/],
    ['* * * * 8', /^day-of-week: 8 is out of range 0-7$/],
    ['*/0 * * * *', /^minute: step "0" in "\*\/0" must be a whole number of at least 1$/],
    ['5-1 * * * *', /^minute: range "5-1" runs backwards/],
    ['1,,2 * * * *', /^minute: empty item/],
    ['1-2-3 * * * *', /^minute: "1-2-3" is not a value, a range or a step/],
    ['1/2/3 * * * *', /more than one "\/"/],
    ['a * * * *', /^minute: "a" is not a number$/],
    ['0 0 * * funday', /^day-of-week: "funday" is not a number or a name/],
    ['0 0 * foo *', /^month: "foo" is not a number or a name/],
    ['0 0 L * *', /not supported/],
    ['0 0 ? * *', /not supported/],
    ['0 0 * * 1#2', /not supported/],
    ['H * * * *', /not supported/],
    ['@daily', /macros such as @daily are not supported/],
    ['0 0 30 2 *', /never fires/],
    ['0 0 31 4,6 *', /never fires/],
  ])('rejects %j with the reason', (expr, why) => {
    expect(validateCron(expr)).toMatch(why);
  });

  it('reports every bad field', () => {
    expect(validateCron('60 24 * * *')).toBe('minute: 60 is out of range 0-59; hour: 24 is out of range 0-23');
  });

  it('nextRunAt throws the same reason', () => {
    expect(() => nextRunAt({ mode: 'cron', cron: '0 0 * *' }, 0, 'UTC')).toThrow(/expected 5 fields, got 4/);
  });
});

describe('cron names and edge months', () => {
  const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
  const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

  it.each(MONTHS.map((name, i) => [name, i + 1] as const))('month name %s is month %i, in any case', (name, month) => {
    for (const spelled of [name, name.toUpperCase()]) {
      const [first] = runs(`0 0 1 ${spelled} *`, '2025-12-31T00:00:00Z', 1);
      expect(first).toBe(`2026-${String(month).padStart(2, '0')}-01T00:00:00.000Z`);
    }
  });

  it.each(DAYS.map((name, i) => [name, i] as const))('weekday name %s is day %i (2025-06-08 is a Sunday)', (name, day) => {
    expect(runs(`0 0 * * ${name}`, '2025-06-07T12:00:00Z', 1)).toEqual([`2025-06-${String(8 + day).padStart(2, '0')}T00:00:00.000Z`]);
  });

  it('names make ranges too', () => {
    expect(runs('0 0 1 nov-dec *', '2025-06-10T00:00:00Z', 3)).toEqual([
      '2025-11-01T00:00:00.000Z',
      '2025-12-01T00:00:00.000Z',
      '2026-11-01T00:00:00.000Z',
    ]);
    expect(runs('0 0 * * thu-sat', '2025-06-10T00:00:00Z', 3)).toEqual([
      '2025-06-12T00:00:00.000Z',
      '2025-06-13T00:00:00.000Z',
      '2025-06-14T00:00:00.000Z',
    ]);
  });

  it('a day that only December has is possible: 0 0 31 12 * is accepted and fires on New Year\'s Eve', () => {
    expect(validateCron('0 0 31 12 *')).toBeNull();
    expect(validateCron('0 0 31 dec *')).toBeNull();
    expect(runs('0 0 31 12 *', '2025-06-10T00:00:00Z', 1)).toEqual(['2025-12-31T00:00:00.000Z']);
  });

  it('a day that only January has is possible, and 31 in 30-day months only never fires', () => {
    expect(validateCron('0 0 31 1 *')).toBeNull();
    expect(validateCron('0 0 31 4,6,9,11 *')).toMatch(/^never fires: day-of-month "31" does not occur in month "4,6,9,11"$/);
  });

  it('the hint for a bad name lists the first names of that field', () => {
    // Expressions no other test uses: results are cached, so a repeated one would not run the code.
    expect(validateCron('0 0 * bar *')).toBe('month: "bar" is not a number or a name (jan, feb, mar, …)');
    expect(validateCron('0 0 * * noday')).toBe('day-of-week: "noday" is not a number or a name (sun, mon, tue, …)');
    expect(validateCron('0 x * * *')).toBe('hour: "x" is not a number');
    expect(validateCron('0 0 * * 1W')).toBe('day-of-week: "1W" is not a number or a name (sun, mon, tue, …) (L, W, #, ? and H are not supported)');
  });

  it('a range with an empty end is neither a value nor a range', () => {
    expect(validateCron('1- * * * *')).toBe('minute: "1-" is not a value, a range or a step');
    expect(validateCron('0 0 * -3 *')).toBe('month: "-3" is not a value, a range or a step');
  });

  it('a step must be digits only', () => {
    expect(validateCron('*/x5 * * * *')).toBe('minute: step "x5" in "*/x5" must be a whole number of at least 1');
    expect(validateCron('0 */5x * * *')).toBe('hour: step "5x" in "*/5x" must be a whole number of at least 1');
  });

  it('DST handling follows the minute and hour fields: a step or * follows the wall clock, values are fixed times', () => {
    expect(compileCron('*/20 1 * * *').wildcard).toBe(true);
    expect(compileCron('5 */2 * * *').wildcard).toBe(true);
    expect(compileCron('5 1-3 * * *').wildcard).toBe(false);
    expect(compileCron('5,35 1 * * *').times).toEqual([65, 95]);
  });

  it('an expression our reading accepts but cron-parser refuses is refused with cron-parser\'s reason', () => {
    // Sunday twice (7 and 0): a set to us, a duplicate to cron-parser.
    expect(validateCron('0 0 * * 7,0')).toMatch(/^rejected by cron-parser: .*duplicate/);
  });

  it('a value that is not a string (a YAML number) is refused with its type, not a crash', () => {
    expect(validateCron(5 as unknown as string)).toBe('expected a string, got number');
    expect(validateCron(undefined as unknown as string)).toBe('expected a string, got undefined');
    expect(() => nextRunAt({ mode: 'cron', cron: 5 as unknown as string }, 0, 'UTC')).toThrow('expected a string, got number');
  });
});

describe('cron fields', () => {
  it('fires strictly after the reference', () => {
    expect(runs('0 9 * * *', '2025-06-10T08:59:59.999Z', 1)).toEqual(['2025-06-10T09:00:00.000Z']);
    expect(runs('0 9 * * *', '2025-06-10T09:00:00.000Z', 1)).toEqual(['2025-06-11T09:00:00.000Z']);
    expect(runs('0 9 * * *', '2025-06-10T09:00:00.001Z', 1)).toEqual(['2025-06-11T09:00:00.000Z']);
    expect(runs('* * * * *', '2025-06-10T12:00:30Z', 2)).toEqual(['2025-06-10T12:01:00.000Z', '2025-06-10T12:02:00.000Z']);
    expect(runs('* * * * *', '2025-06-10T12:00:00Z', 1)).toEqual(['2025-06-10T12:01:00.000Z']);
  });

  it('values, lists, ranges and steps', () => {
    expect(runs('*/15 * * * *', '2025-06-10T12:00:00Z', 2)).toEqual(['2025-06-10T12:15:00.000Z', '2025-06-10T12:30:00.000Z']);
    expect(runs('0 8,12,18 * * *', '2025-06-10T12:00:00Z', 2)).toEqual(['2025-06-10T18:00:00.000Z', '2025-06-11T08:00:00.000Z']);
    expect(runs('30 9-11 * * *', '2025-06-10T10:30:00Z', 2)).toEqual(['2025-06-10T11:30:00.000Z', '2025-06-11T09:30:00.000Z']);
    expect(runs('0 1-23/3 * * *', '2025-06-10T05:00:00Z', 3)).toEqual([
      '2025-06-10T07:00:00.000Z',
      '2025-06-10T10:00:00.000Z',
      '2025-06-10T13:00:00.000Z',
    ]);
    expect(runs('5/20 * * * *', '2025-06-10T12:00:00Z', 4)).toEqual([
      '2025-06-10T12:05:00.000Z',
      '2025-06-10T12:25:00.000Z',
      '2025-06-10T12:45:00.000Z',
      '2025-06-10T13:05:00.000Z',
    ]);
    expect(runs('0 0 1 jan *', '2025-06-10T00:00:00Z', 1)).toEqual(['2026-01-01T00:00:00.000Z']);
    expect(runs('0 0 29 2 *', '2025-01-01T00:00:00Z', 2)).toEqual(['2028-02-29T00:00:00.000Z', '2032-02-29T00:00:00.000Z']);
    expect(runs('0 0 31 * *', '2025-04-01T00:00:00Z', 3)).toEqual([
      '2025-05-31T00:00:00.000Z',
      '2025-07-31T00:00:00.000Z',
      '2025-08-31T00:00:00.000Z',
    ]);
  });

  it('Sunday is 0 or 7 (2025-06-10 is a Tuesday)', () => {
    for (const expr of ['0 0 * * 0', '0 0 * * 7', '0 0 * * sun', '0 0 * * SUN']) {
      expect(runs(expr, '2025-06-10T00:00:00Z', 2)).toEqual(['2025-06-15T00:00:00.000Z', '2025-06-22T00:00:00.000Z']);
    }
    expect(runs('0 0 * * 5-7', '2025-06-10T00:00:00Z', 4)).toEqual([
      '2025-06-13T00:00:00.000Z',
      '2025-06-14T00:00:00.000Z',
      '2025-06-15T00:00:00.000Z',
      '2025-06-20T00:00:00.000Z',
    ]);
  });

  it('day-of-month and day-of-week both restricted: either may match', () => {
    // The 13th, or any Friday.
    expect(runs('0 0 13 * 5', '2025-06-10T00:00:00Z', 6)).toEqual([
      '2025-06-13T00:00:00.000Z', // Friday the 13th
      '2025-06-20T00:00:00.000Z',
      '2025-06-27T00:00:00.000Z',
      '2025-07-04T00:00:00.000Z',
      '2025-07-11T00:00:00.000Z',
      '2025-07-13T00:00:00.000Z', // a Sunday, matched by day-of-month
    ]);
    expect(runs('0 0 1 * 1', '2025-01-01T00:00:00Z', 6)).toEqual([
      '2025-01-06T00:00:00.000Z',
      '2025-01-13T00:00:00.000Z',
      '2025-01-20T00:00:00.000Z',
      '2025-01-27T00:00:00.000Z',
      '2025-02-01T00:00:00.000Z', // a Saturday
      '2025-02-03T00:00:00.000Z',
    ]);
    // A stepped day-of-month is restricted too (POSIX), so odd days OR Mondays.
    expect(runs('0 0 */2 * 1', '2025-06-10T00:00:00Z', 5)).toEqual([
      '2025-06-11T00:00:00.000Z',
      '2025-06-13T00:00:00.000Z',
      '2025-06-15T00:00:00.000Z',
      '2025-06-16T00:00:00.000Z', // Monday
      '2025-06-17T00:00:00.000Z',
    ]);
  });

  it('only one restricted: that one must match', () => {
    expect(runs('0 0 13 * *', '2025-06-10T00:00:00Z', 2)).toEqual(['2025-06-13T00:00:00.000Z', '2025-07-13T00:00:00.000Z']);
    expect(runs('0 0 * * 5', '2025-06-10T00:00:00Z', 2)).toEqual(['2025-06-13T00:00:00.000Z', '2025-06-20T00:00:00.000Z']);
  });

  it('fields are local to the zone', () => {
    expect(runs('0 9 * * *', '2025-06-10T00:00:00Z', 1, 'Asia/Tokyo')).toEqual(['2025-06-11T00:00:00.000Z']);
    expect(runs('0 9 * * *', '2025-06-10T12:00:00Z', 1, 'America/New_York')).toEqual(['2025-06-10T13:00:00.000Z']);
    expect(runs('30 0 * * 1', '2025-06-10T00:00:00Z', 1, 'Asia/Kolkata')).toEqual(['2025-06-15T19:00:00.000Z']);
  });
});

describe('agrees with cron-parser away from DST', () => {
  // A seeded generator of expressions; cron-parser is the oracle where it is right (no DST).
  function rng(seed: number): () => number {
    let s = seed >>> 0;
    return () => {
      s = (s * 1664525 + 1013904223) >>> 0;
      return s / 2 ** 32;
    };
  }
  function field(r: () => number, min: number, max: number): string {
    const pick = (): number => min + Math.floor(r() * (max - min + 1));
    const k = r();
    if (k < 0.3) return '*';
    if (k < 0.45) return `*/${1 + Math.floor(r() * 12)}`;
    if (k < 0.6) {
      const a = pick();
      const b = pick();
      return `${Math.min(a, b)}-${Math.max(a, b)}`;
    }
    if (k < 0.7) {
      const a = pick();
      return `${a}-${max}/${1 + Math.floor(r() * 5)}`;
    }
    if (k < 0.85) return [pick(), pick(), pick()].join(',');
    return String(pick());
  }

  const cases: Array<[string, string, string]> = [];
  const r = rng(20250610);
  while (cases.length < 150) {
    const expr = [field(r, 0, 59), field(r, 0, 23), field(r, 1, 28), field(r, 1, 12), field(r, 0, 7)].join(' ');
    if (validateCron(expr) !== null) continue;
    const tz = ['UTC', 'Asia/Tokyo', 'Asia/Kolkata'][cases.length % 3]!;
    const start = Date.UTC(2025, 0, 1) + Math.floor(r() * 365 * 86_400_000);
    cases.push([expr, tz, new Date(start).toISOString()]);
  }

  it.each(cases)('%s in %s after %s', (expr, tz, after) => {
    const it = CronExpressionParser.parse(expr, { tz, currentDate: new Date(after) });
    const expected = it.take(8).map((d) => new Date(d.getTime()).toISOString());
    expect(runs(expr, after, 8, tz)).toEqual(expected);
  });
});
