import { describe, expect, it } from 'vitest';
import type { Timing } from '../../../main/engine/domain/types.js';
import { nextRunAt, nextRuns, TimingError } from '../../../main/engine/timing/next.js';

const utc = (iso: string): number => Date.parse(iso);

describe('nextRunAt: at', () => {
  const at: Timing = { mode: 'at', at: '2025-06-10T12:00:00Z' };
  it('is the instant while it is still ahead', () => {
    expect(nextRunAt(at, utc('2025-06-10T11:59:59.999Z'), 'UTC')).toBe(utc('2025-06-10T12:00:00Z'));
  });
  it('is null once the reference reaches it (strictly after)', () => {
    expect(nextRunAt(at, utc('2025-06-10T12:00:00Z'), 'UTC')).toBeNull();
    expect(nextRunAt(at, utc('2025-06-11T00:00:00Z'), 'UTC')).toBeNull();
  });
  it('nextRuns stops after the one instant', () => {
    expect(nextRuns(at, utc('2025-06-01T00:00:00Z'), 'UTC', 5)).toEqual([utc('2025-06-10T12:00:00Z')]);
  });
});

describe('nextRunAt: every', () => {
  const every: Timing = { mode: 'every', everyMs: 300_000 };
  it('is the reference (the last completion) plus the interval', () => {
    expect(nextRunAt(every, utc('2025-06-10T12:03:17.250Z'), 'Europe/Berlin')).toBe(utc('2025-06-10T12:08:17.250Z'));
  });
  it('nextRuns steps by the interval, also through DST', () => {
    expect(nextRuns(every, utc('2025-11-02T05:55:00Z'), 'America/New_York', 3)).toEqual([
      utc('2025-11-02T06:00:00Z'),
      utc('2025-11-02T06:05:00Z'),
      utc('2025-11-02T06:10:00Z'),
    ]);
  });
  it.each([0, -1000, 1.5, Number.NaN])('rejects everyMs %d', (everyMs) => {
    expect(() => nextRunAt({ mode: 'every', everyMs }, 0, 'UTC')).toThrow(/every must be a positive whole number/);
  });
});

describe('nextRunAt rejects bad input with the reason', () => {
  it('an unknown zone, in every mode', () => {
    const timings: Timing[] = [
      { mode: 'every', everyMs: 1000 },
      { mode: 'cron', cron: '* * * * *' },
      { mode: 'runtimes', runtimes: ['07:00'] },
      { mode: 'at', at: '2030-01-01T00:00:00Z' },
    ];
    for (const t of timings) expect(() => nextRunAt(t, 0, 'Europe/Atlantis')).toThrow(/unknown time zone "Europe\/Atlantis"/);
  });
  it('a non-finite reference', () => {
    expect(() => nextRunAt({ mode: 'every', everyMs: 1000 }, Number.NaN, 'UTC')).toThrow(/finite/);
  });
  it('an unknown mode', () => {
    expect(() => nextRunAt({ mode: 'sometimes' } as unknown as Timing, 0, 'UTC')).toThrow(/unknown timing mode "sometimes"/);
  });
  it('throws TimingError', () => {
    expect(() => nextRunAt({ mode: 'cron', cron: 'nope' }, 0, 'UTC')).toThrow(TimingError);
  });
  it('a reference that is not a number, or beyond the dates a search can reach', () => {
    const every = { mode: 'every', everyMs: 1000 } as const;
    const max = 8.64e15 - 366 * 10 * 86_400_000;
    expect(nextRunAt(every, max, 'UTC')).toBe(max + 1000);
    expect(nextRunAt(every, -max, 'UTC')).toBe(-max + 1000);
    expect(() => nextRunAt(every, max + 1, 'UTC')).toThrow(`reference time must be a finite number of epoch milliseconds, got ${max + 1}`);
    expect(() => nextRunAt(every, -max - 1, 'UTC')).toThrow('reference time must be a finite number');
    expect(() => nextRunAt(every, Number.POSITIVE_INFINITY, 'UTC')).toThrow('got Infinity');
    expect(() => nextRunAt(every, '5' as unknown as number, 'UTC')).toThrow('reference time must be a finite number of epoch milliseconds, got 5');
  });
  it('the smallest interval is one millisecond', () => {
    expect(nextRunAt({ mode: 'every', everyMs: 1 }, 10, 'UTC')).toBe(11);
    expect(() => nextRunAt({ mode: 'every', everyMs: 0 }, 0, 'UTC')).toThrow('every must be a positive whole number of milliseconds, got 0');
  });
  it('a count that is not a whole number', () => {
    expect(() => nextRuns({ mode: 'every', everyMs: 1000 }, 0, 'UTC', 1.5)).toThrow('count must be a whole number of at least 0, got 1.5');
    expect(nextRuns({ mode: 'every', everyMs: 1000 }, 0, 'UTC', 2)).toEqual([1000, 2000]);
  });
  it('a bad count', () => {
    expect(() => nextRuns({ mode: 'every', everyMs: 1000 }, 0, 'UTC', -1)).toThrow(/count/);
    expect(nextRuns({ mode: 'every', everyMs: 1000 }, 0, 'UTC', 0)).toEqual([]);
  });
});

describe('nextRuns', () => {
  it('each instant is strictly after the one before, for thousands of steps across DST', () => {
    for (const cron of ['*/7 * * * *', '0,30 1,2,3 * * *', '59 23 * * *', '0 0 1 * 1']) {
      for (const tz of ['America/New_York', 'Europe/Berlin', 'Australia/Lord_Howe', 'America/Santiago']) {
        const out = nextRuns({ mode: 'cron', cron }, utc('2025-01-01T00:00:00Z'), tz, 1500);
        expect(out).toHaveLength(1500);
        for (let i = 1; i < out.length; i++) expect(out[i]!).toBeGreaterThan(out[i - 1]!);
      }
    }
  });
});
