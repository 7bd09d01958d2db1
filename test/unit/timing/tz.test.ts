import { describe, expect, it } from 'vitest';
import {
  civilToWall,
  cycleDay,
  hourOffset,
  instantsOfWall,
  isValidTimeZone,
  localToUtc,
  machineTimeZone,
  offsetAt,
  wallTime,
  zoneDay,
} from '../../../main/engine/timing/tz.js';

const utc = (iso: string): number => Date.parse(iso);

describe('time zones', () => {
  it('knows IANA zones and rejects unknown ones', () => {
    expect(isValidTimeZone('America/New_York')).toBe(true);
    expect(isValidTimeZone('Europe/Berlin')).toBe(true);
    expect(isValidTimeZone('UTC')).toBe(true);
    expect(isValidTimeZone('Mars/Olympus_Mons')).toBe(false);
    expect(isValidTimeZone('')).toBe(false);
    expect(isValidTimeZone(' ')).toBe(false);
  });

  it('machineTimeZone is a valid zone', () => {
    expect(isValidTimeZone(machineTimeZone())).toBe(true);
  });

  it('offsetAt reads the offset in force at an instant', () => {
    expect(offsetAt(utc('2025-01-15T12:00:00Z'), 'America/New_York')).toBe(-5 * 3_600_000);
    expect(offsetAt(utc('2025-07-15T12:00:00Z'), 'America/New_York')).toBe(-4 * 3_600_000);
    expect(offsetAt(utc('2025-03-09T06:59:59Z'), 'America/New_York')).toBe(-5 * 3_600_000);
    expect(offsetAt(utc('2025-03-09T07:00:00Z'), 'America/New_York')).toBe(-4 * 3_600_000);
    expect(offsetAt(utc('2025-06-01T00:00:00Z'), 'Asia/Kolkata')).toBe(5.5 * 3_600_000);
  });
});

describe('cycleDay is the local calendar day of an instant', () => {
  it.each([
    ['2025-03-09T04:59:59Z', 'America/New_York', '2025-03-08'],
    ['2025-03-09T05:00:00Z', 'America/New_York', '2025-03-09'],
    ['2025-12-31T15:00:00Z', 'Asia/Tokyo', '2026-01-01'],
    ['2025-12-31T14:59:59Z', 'Asia/Tokyo', '2025-12-31'],
    ['2025-10-25T21:59:59Z', 'Europe/Berlin', '2025-10-25'],
    ['2025-10-25T22:00:00Z', 'Europe/Berlin', '2025-10-26'],
    ['2025-11-02T06:30:00Z', 'America/New_York', '2025-11-02'],
  ])('%s in %s → %s', (iso, tz, day) => {
    expect(cycleDay(utc(iso), tz)).toBe(day);
  });

  it('rejects an unknown zone', () => {
    expect(() => cycleDay(0, 'Nowhere/City')).toThrow(/unknown time zone "Nowhere\/City"/);
  });
});

describe('localToUtc resolves wall times the way Vixie cron does', () => {
  it('an ordinary time', () => {
    expect(localToUtc({ year: 2025, month: 7, day: 4, hour: 12 }, 'America/New_York')).toBe(utc('2025-07-04T16:00:00Z'));
    expect(localToUtc({ year: 2025, month: 1, day: 1 }, 'Asia/Kolkata')).toBe(utc('2024-12-31T18:30:00Z'));
  });

  it('a time skipped by spring-forward → the first instant after the gap', () => {
    expect(localToUtc({ year: 2025, month: 3, day: 9, hour: 2, minute: 30 }, 'America/New_York')).toBe(
      utc('2025-03-09T07:00:00Z'),
    );
    expect(localToUtc({ year: 2025, month: 3, day: 30, hour: 2, minute: 30 }, 'Europe/Berlin')).toBe(
      utc('2025-03-30T01:00:00Z'),
    );
  });

  it('a time repeated by fall-back → its first occurrence', () => {
    expect(localToUtc({ year: 2025, month: 11, day: 2, hour: 1, minute: 30 }, 'America/New_York')).toBe(
      utc('2025-11-02T05:30:00Z'),
    );
    expect(localToUtc({ year: 2025, month: 10, day: 26, hour: 2, minute: 30 }, 'Europe/Berlin')).toBe(
      utc('2025-10-26T00:30:00Z'),
    );
    // Lord Howe falls back half an hour: 02:00 +11 → 01:30 +10:30.
    expect(localToUtc({ year: 2025, month: 4, day: 6, hour: 1, minute: 45 }, 'Australia/Lord_Howe')).toBe(
      utc('2025-04-05T14:45:00Z'),
    );
  });

  it('instantsOfWall lists both occurrences of a fold and none in a gap', () => {
    const fold = instantsOfWall(Date.UTC(2025, 10, 2, 1, 30), 'America/New_York');
    expect(fold.instants).toEqual([utc('2025-11-02T05:30:00Z'), utc('2025-11-02T06:30:00Z')]);
    const gap = instantsOfWall(Date.UTC(2025, 2, 9, 2, 30), 'America/New_York');
    expect(gap.instants).toEqual([]);
    expect(gap.gapEnd).toBe(utc('2025-03-09T07:00:00Z'));
  });

  it('wallTime reads the local clock, second occurrence included', () => {
    expect(wallTime(utc('2025-11-02T06:30:00Z'), 'America/New_York')).toEqual({
      year: 2025, month: 11, day: 2, hour: 1, minute: 30, second: 0, millisecond: 0, weekday: 0,
    });
  });
});

describe('edges of the zone arithmetic', () => {
  const iso = (ms: number) => new Date(ms).toISOString();

  it('a wall time exactly at a spring-forward change is in the gap; one in a fold occurs twice, ascending', () => {
    const gap = instantsOfWall(Date.UTC(2025, 2, 9, 2, 0), 'America/New_York');
    expect({ instants: gap.instants, gapEnd: iso(gap.gapEnd!) }).toEqual({ instants: [], gapEnd: '2025-03-09T07:00:00.000Z' });
    const fold = instantsOfWall(Date.UTC(2025, 10, 2, 1, 0), 'America/New_York');
    expect({ instants: fold.instants.map(iso), gapEnd: fold.gapEnd }).toEqual({ instants: ['2025-11-02T05:00:00.000Z', '2025-11-02T06:00:00.000Z'], gapEnd: null });
  });

  it('an offset change in the middle of a UTC hour (Adelaide, +10:30 → +9:30 at 16:30Z)', () => {
    const t = Date.UTC(2025, 3, 5, 16, 30);
    expect(offsetAt(t - 15 * 60_000, 'Australia/Adelaide')).toBe(10.5 * 3_600_000);
    expect(offsetAt(t + 15 * 60_000, 'Australia/Adelaide')).toBe(9.5 * 3_600_000);
    expect(offsetAt(t - 1, 'Australia/Adelaide')).toBe(10.5 * 3_600_000);
    expect(offsetAt(t, 'Australia/Adelaide')).toBe(9.5 * 3_600_000);
  });

  it('local seconds and milliseconds count; an impossible local date-time is refused', () => {
    expect(iso(localToUtc({ year: 2025, month: 6, day: 10, hour: 12, minute: 1, second: 30, millisecond: 250 }, 'UTC'))).toBe('2025-06-10T12:01:30.250Z');
    expect(() => localToUtc({ year: Number.NaN, month: 1, day: 1 }, 'UTC')).toThrow('invalid local date-time {"year":null,"month":1,"day":1}');
  });

  it('a zone name must be a non-empty string: undefined is not the machine zone', () => {
    expect(['', '   ', undefined, 7, null].map((tz) => isValidTimeZone(tz as unknown as string))).toEqual([false, false, false, false, false]);
  });

  it('years before 1 are those years too, counted astronomically (0 is 1 BC)', () => {
    expect(civilToWall(-1, 6, 15, 12)).toBe(utc('-000001-06-15T12:00:00Z'));
  });

  it('instants before year 1 are read in the right year (Intl writes 1 BC as "1", so the era counts)', () => {
    expect([offsetAt(utc('0000-06-15T12:00:00Z'), 'UTC'), offsetAt(utc('-000001-06-15T12:00:00Z'), 'UTC')]).toEqual([0, 0]);
    expect(cycleDay(utc('0000-06-15T12:00:00Z'), 'UTC')).toBe('0000-06-15');
    expect(cycleDay(utc('-000001-06-15T12:00:00Z'), 'UTC')).toMatch(/^-0*1-06-15$/);
    expect(localToUtc({ year: 0, month: 6, day: 15, hour: 12 }, 'UTC')).toBe(utc('0000-06-15T12:00:00Z'));
  });

  // UTC itself is known without Intl (tz-utc.test.ts): Etc/GMT, also always +0, is read through it.
  it('a zone read through Intl is read whole: two-digit months, days, hours and seconds, and the era before year 1', () => {
    expect(wallTime(utc('2025-11-29T23:58:59Z'), 'Etc/GMT')).toMatchObject({ year: 2025, month: 11, day: 29, hour: 23, minute: 58, second: 59 });
    expect(offsetAt(utc('2025-12-31T10:10:10Z'), 'Etc/GMT')).toBe(0);
    expect(cycleDay(utc('0000-06-15T12:00:00Z'), 'Etc/GMT')).toBe('0000-06-15');
    expect(cycleDay(utc('-000001-06-15T12:00:00Z'), 'Etc/GMT')).toMatch(/^-0*1-06-15$/);
    expect(localToUtc({ year: -1, month: 6, day: 15, hour: 12 }, 'Etc/GMT')).toBe(utc('-000001-06-15T12:00:00Z'));
  });

  it('years 0 to 99 are those years, not 1900 to 1999', () => {
    const year = (y: number) => new Date(civilToWall(y, 3, 1)).getUTCFullYear();
    expect([0, 5, 99, 100, 1999].map(year)).toEqual([0, 5, 99, 100, 1999]);
  });

  it('a cycle day of a year below 1000 is zero-padded; a non-finite instant is refused', () => {
    expect(cycleDay(civilToWall(5, 3, 1, 12), 'UTC')).toBe('0005-03-01');
    expect(() => cycleDay(Number.NaN, 'UTC')).toThrow('instant must be a finite number of epoch milliseconds, got NaN');
  });

  it("the machine's zone: TZ when it names a zone, else what Intl says", () => {
    const saved = process.env.TZ;
    try {
      process.env.TZ = 'Asia/Tokyo';
      expect(machineTimeZone()).toBe('Asia/Tokyo');
      process.env.TZ = 'Nowhere/Atlantis';
      // Node's Intl then knows no zone at all: UTC.
      expect(machineTimeZone()).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC');
      expect(isValidTimeZone(machineTimeZone())).toBe(true);
      delete process.env.TZ;
      expect(machineTimeZone()).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });
});

describe('the facts kept per hour and per local day', () => {
  const H = 3_600_000;
  const hourOf = (iso: string) => Math.floor(Date.parse(iso) / H);

  it('an hour has one offset throughout, or NaN when the offset changes inside it (Adelaide at 16:30Z)', () => {
    expect(hourOffset(hourOf('2025-04-05T15:00:00Z'), 'Australia/Adelaide')).toBe(10.5 * H);
    expect(hourOffset(hourOf('2025-04-05T16:00:00Z'), 'Australia/Adelaide')).toBeNaN();
    expect(hourOffset(hourOf('2025-04-05T17:00:00Z'), 'Australia/Adelaide')).toBe(9.5 * H);
    // A change on the hour (New York, 07:00Z) leaves both hours steady.
    expect([hourOffset(hourOf('2025-03-09T06:00:00Z'), 'America/New_York'), hourOffset(hourOf('2025-03-09T07:00:00Z'), 'America/New_York')]).toEqual([-5 * H, -4 * H]);
  });

  it('a steady local day has no instant of change (NaN); a day with a change names its first instant', () => {
    const day = (iso: string) => Math.floor(Date.parse(iso) / 86_400_000);
    expect(zoneDay(day('2025-06-10'), 'Europe/Berlin')).toEqual({ before: 2 * H, after: 2 * H, at: Number.NaN });
    expect(zoneDay(day('2025-03-30'), 'Europe/Berlin')).toEqual({ before: H, after: 2 * H, at: Date.parse('2025-03-30T01:00:00Z') });
  });
});
