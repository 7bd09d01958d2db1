// DST as Vixie cron does it. Transitions used (2025):
//   America/New_York  spring 2025-03-09 02:00 EST → 03:00 EDT at 07:00Z
//                     fall   2025-11-02 02:00 EDT → 01:00 EST at 06:00Z
//   Europe/Berlin     spring 2025-03-30 02:00 CET → 03:00 CEST at 01:00Z
//                     fall   2025-10-26 03:00 CEST → 02:00 CET at 01:00Z
import { describe, expect, it } from 'vitest';
import type { Timing } from '../../../main/engine/domain/types.js';
import { nextRuns, parseAt } from '../../../main/engine/timing/next.js';

const NY = 'America/New_York';
const BERLIN = 'Europe/Berlin';
const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');
const runs = (timing: Timing, after: string, tz: string, count: number): string[] =>
  nextRuns(timing, Date.parse(after), tz, count).map(iso);
const cron = (expr: string): Timing => ({ mode: 'cron', cron: expr });
const daily = (...times: string[]): Timing => ({ mode: 'runtimes', runtimes: times });

describe('runtimes across DST', () => {
  it('New York spring-forward: 02:30 fires once, at 03:00 EDT', () => {
    expect(runs(daily('02:30'), '2025-03-08T12:00:00Z', NY, 2)).toEqual(['2025-03-09T07:00:00Z', '2025-03-10T06:30:00Z']);
  });

  it('New York spring-forward: times in and at the end of the gap fire once together', () => {
    expect(runs(daily('02:00', '02:30', '03:00', '03:30'), '2025-03-09T05:00:00Z', NY, 3)).toEqual([
      '2025-03-09T07:00:00Z',
      '2025-03-09T07:30:00Z',
      '2025-03-10T06:00:00Z',
    ]);
  });

  it('New York fall-back: 01:30 fires once, at its first occurrence', () => {
    expect(runs(daily('01:30'), '2025-11-01T12:00:00Z', NY, 2)).toEqual(['2025-11-02T05:30:00Z', '2025-11-03T06:30:00Z']);
    // From inside the repeated hour, the second 01:30 is not a new run.
    expect(runs(daily('01:30'), '2025-11-02T05:30:00Z', NY, 1)).toEqual(['2025-11-03T06:30:00Z']);
  });

  it('Berlin spring-forward: 02:30 fires at 03:00 CEST', () => {
    expect(runs(daily('02:30'), '2025-03-29T12:00:00Z', BERLIN, 2)).toEqual(['2025-03-30T01:00:00Z', '2025-03-31T00:30:00Z']);
  });

  it('Berlin fall-back: 02:30 fires at 02:30 CEST only', () => {
    expect(runs(daily('02:30'), '2025-10-25T12:00:00Z', BERLIN, 2)).toEqual(['2025-10-26T00:30:00Z', '2025-10-27T01:30:00Z']);
    expect(runs(daily('02:30'), '2025-10-26T00:45:00Z', BERLIN, 1)).toEqual(['2025-10-27T01:30:00Z']);
  });

  it('strictly after a gap-shifted instant', () => {
    expect(runs(daily('02:30'), '2025-03-09T07:00:00Z', NY, 1)).toEqual(['2025-03-10T06:30:00Z']);
  });
});

describe('at without an offset across DST', () => {
  it.each([
    ['2025-03-09T02:30', NY, '2025-03-09T07:00:00Z'],
    ['2025-11-02T01:30', NY, '2025-11-02T05:30:00Z'],
    ['2025-03-30T02:30', BERLIN, '2025-03-30T01:00:00Z'],
    ['2025-10-26T02:30', BERLIN, '2025-10-26T00:30:00Z'],
  ])('%s in %s → %s', (at, tz, expected) => {
    expect(iso(parseAt(at, tz))).toBe(expected);
  });

  it('an explicit offset picks the instant, even the second occurrence', () => {
    expect(iso(parseAt('2025-11-02T01:30-05:00', NY))).toBe('2025-11-02T06:30:00Z');
    expect(iso(parseAt('2025-10-26T02:30+01:00', BERLIN))).toBe('2025-10-26T01:30:00Z');
  });

  it('nextRunAt of a local `at` in the gap', () => {
    expect(runs({ mode: 'at', at: '2025-03-09T02:30' }, '2025-03-09T06:00:00Z', NY, 5)).toEqual(['2025-03-09T07:00:00Z']);
  });
});

describe('fixed-time cron across DST', () => {
  it('New York spring-forward: 30 2 * * * fires at 03:00 EDT', () => {
    expect(runs(cron('30 2 * * *'), '2025-03-08T12:00:00Z', NY, 2)).toEqual(['2025-03-09T07:00:00Z', '2025-03-10T06:30:00Z']);
  });

  it('New York spring-forward: two skipped times coalesce into one run', () => {
    expect(runs(cron('0,30 2 * * *'), '2025-03-08T12:00:00Z', NY, 2)).toEqual(['2025-03-09T07:00:00Z', '2025-03-10T06:00:00Z']);
  });

  it('New York fall-back: 30 1 * * * fires once', () => {
    expect(runs(cron('30 1 * * *'), '2025-11-01T12:00:00Z', NY, 2)).toEqual(['2025-11-02T05:30:00Z', '2025-11-03T06:30:00Z']);
    expect(runs(cron('0,30 1 * * *'), '2025-11-02T04:00:00Z', NY, 3)).toEqual([
      '2025-11-02T05:00:00Z',
      '2025-11-02T05:30:00Z',
      '2025-11-03T06:00:00Z',
    ]);
  });

  it('Berlin spring-forward: 30 2 * * * fires at 03:00 CEST', () => {
    expect(runs(cron('30 2 * * *'), '2025-03-29T12:00:00Z', BERLIN, 2)).toEqual(['2025-03-30T01:00:00Z', '2025-03-31T00:30:00Z']);
  });

  it('Berlin fall-back: 30 2 * * * fires once, in CEST', () => {
    expect(runs(cron('30 2 * * *'), '2025-10-25T12:00:00Z', BERLIN, 2)).toEqual(['2025-10-26T00:30:00Z', '2025-10-27T01:30:00Z']);
  });

  it('a day-restricted fixed time on the transition day (Sunday)', () => {
    expect(runs(cron('30 2 * * 0'), '2025-03-02T12:00:00Z', NY, 2)).toEqual(['2025-03-09T07:00:00Z', '2025-03-16T06:30:00Z']);
  });

  it('a gap at midnight (Santiago, 2025-09-07 00:00 → 01:00)', () => {
    expect(runs(cron('15 0 * * *'), '2025-09-05T12:00:00Z', 'America/Santiago', 3)).toEqual([
      '2025-09-06T04:15:00Z',
      '2025-09-07T04:00:00Z',
      '2025-09-08T03:15:00Z',
    ]);
  });
});

describe('wildcard and stepped cron keep real-time cadence across DST', () => {
  it('New York fall-back: */30 fires every 30 real minutes, both 01:00s and 01:30s', () => {
    expect(runs(cron('*/30 * * * *'), '2025-11-02T04:45:00Z', NY, 5)).toEqual([
      '2025-11-02T05:00:00Z', // 01:00 EDT
      '2025-11-02T05:30:00Z', // 01:30 EDT
      '2025-11-02T06:00:00Z', // 01:00 EST
      '2025-11-02T06:30:00Z', // 01:30 EST
      '2025-11-02T07:00:00Z', // 02:00 EST
    ]);
  });

  // St John's fell back at 00:01 NDT (02:31Z) on 2010-11-07 to 23:01 NST of the day before, so the
  // repeated half hour spans midnight: the next day's 00:00 comes before the day's second 23:30.
  it("St John's 2010 fall-back across midnight: */30 fires in real-time order, the 00:00 before the second 23:30", () => {
    expect(runs(cron('*/30 * * * *'), '2010-11-07T02:00:00Z', 'America/St_Johns', 5)).toEqual([
      '2010-11-07T02:30:00Z', // 00:00 NDT, Sunday
      '2010-11-07T03:00:00Z', // 23:30 NST, Saturday again
      '2010-11-07T03:30:00Z', // 00:00 NST
      '2010-11-07T04:00:00Z', // 00:30 NST
      '2010-11-07T04:30:00Z',
    ]);
  });

  it('New York fall-back: hourly fires in both 01:00s', () => {
    expect(runs(cron('0 * * * *'), '2025-11-02T03:30:00Z', NY, 4)).toEqual([
      '2025-11-02T04:00:00Z',
      '2025-11-02T05:00:00Z',
      '2025-11-02T06:00:00Z',
      '2025-11-02T07:00:00Z',
    ]);
  });

  it('New York fall-back: a stepped hour range (1-23/3) fires in both 01:00s', () => {
    expect(runs(cron('0 1-23/3 * * *'), '2025-11-02T03:30:00Z', NY, 3)).toEqual([
      '2025-11-02T05:00:00Z',
      '2025-11-02T06:00:00Z',
      '2025-11-02T09:00:00Z', // 04:00 EST
    ]);
  });

  it('New York spring-forward: times inside the gap are skipped, not moved', () => {
    expect(runs(cron('*/30 * * * *'), '2025-03-09T06:15:00Z', NY, 3)).toEqual([
      '2025-03-09T06:30:00Z', // 01:30 EST
      '2025-03-09T07:00:00Z', // 03:00 EDT
      '2025-03-09T07:30:00Z',
    ]);
    expect(runs(cron('30 * * * *'), '2025-03-09T05:45:00Z', NY, 2)).toEqual(['2025-03-09T06:30:00Z', '2025-03-09T07:30:00Z']);
    expect(runs(cron('0 */2 * * *'), '2025-03-09T04:30:00Z', NY, 2)).toEqual([
      '2025-03-09T05:00:00Z', // 00:00 EST
      '2025-03-09T08:00:00Z', // 04:00 EDT; 02:00 did not exist
    ]);
  });

  it('Berlin fall-back: */30 fires every 30 real minutes through the repeated hour', () => {
    expect(runs(cron('*/30 * * * *'), '2025-10-25T23:45:00Z', BERLIN, 5)).toEqual([
      '2025-10-26T00:00:00Z', // 02:00 CEST
      '2025-10-26T00:30:00Z', // 02:30 CEST
      '2025-10-26T01:00:00Z', // 02:00 CET
      '2025-10-26T01:30:00Z', // 02:30 CET
      '2025-10-26T02:00:00Z', // 03:00 CET
    ]);
    expect(runs(cron('15 */1 * * *'), '2025-10-26T00:00:00Z', BERLIN, 3)).toEqual([
      '2025-10-26T00:15:00Z',
      '2025-10-26T01:15:00Z',
      '2025-10-26T02:15:00Z',
    ]);
  });

  it('Berlin spring-forward: */30 skips the missing hour', () => {
    expect(runs(cron('*/30 * * * *'), '2025-03-30T00:15:00Z', BERLIN, 3)).toEqual([
      '2025-03-30T00:30:00Z', // 01:30 CET
      '2025-03-30T01:00:00Z', // 03:00 CEST
      '2025-03-30T01:30:00Z',
    ]);
  });

  it('a minute wildcard with a fixed hour follows the clock too (Vixie)', () => {
    expect(runs(cron('*/30 1 * * *'), '2025-11-02T04:45:00Z', NY, 5)).toEqual([
      '2025-11-02T05:00:00Z',
      '2025-11-02T05:30:00Z',
      '2025-11-02T06:00:00Z',
      '2025-11-02T06:30:00Z',
      '2025-11-03T06:00:00Z',
    ]);
    expect(runs(cron('*/30 2 * * *'), '2025-03-09T05:00:00Z', NY, 1)).toEqual(['2025-03-10T06:00:00Z']);
  });

  it('a half-hour fold (Lord Howe, 02:00 +11 → 01:30 +10:30) keeps the cadence', () => {
    expect(runs(cron('*/30 * * * *'), '2025-04-05T14:15:00Z', 'Australia/Lord_Howe', 3)).toEqual([
      '2025-04-05T14:30:00Z', // 01:30 +11
      '2025-04-05T15:00:00Z', // 01:30 +10:30, again
      '2025-04-05T15:30:00Z', // 02:00 +10:30
    ]);
  });
});
