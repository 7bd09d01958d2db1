import { describe, expect, it } from 'vitest';
import {
  cycleDay,
  instantsOfWall,
  isValidTimeZone,
  localToUtc,
  machineTimeZone,
  offsetAt,
  wallTime,
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
