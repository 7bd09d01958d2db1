import { describe, expect, it } from 'vitest';
import { DurationError, formatDuration, parseDuration } from '../../../main/engine/timing/duration.js';
import { TimingError } from '../../../main/engine/timing/errors.js';

describe('parseDuration accepts positive durations in short and long forms', () => {
  it.each([
    ['500ms', 500],
    ['1 millisecond', 1],
    ['30s', 30_000],
    ['1 second', 1000],
    ['90 sec', 90_000],
    ['30m', 1_800_000],
    ['5 minutes', 300_000],
    ['1 min', 60_000],
    ['2h', 7_200_000],
    ['2 hours', 7_200_000],
    ['1 hr', 3_600_000],
    ['1d', 86_400_000],
    ['3 days', 259_200_000],
    ['  5m  ', 300_000],
    ['5M', 300_000],
    ['+5m', 300_000],
  ])('%s → %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it('rounds fractions to whole milliseconds', () => {
    expect(parseDuration('1.5h')).toBe(5_400_000);
    expect(parseDuration('0.5s')).toBe(500);
    expect(parseDuration('.25s')).toBe(250);
    expect(parseDuration('2.5ms')).toBe(3);
    expect(parseDuration('1.4ms')).toBe(1);
  });

  it('adds up compound durations', () => {
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('1h 30m 15s')).toBe(5_415_000);
    expect(parseDuration('1d 12h')).toBe(129_600_000);
  });

  it('takes numbers as milliseconds, rounded', () => {
    expect(parseDuration(1500)).toBe(1500);
    expect(parseDuration(1.6)).toBe(2);
  });
});

describe('parseDuration rejects with the reason', () => {
  it.each([
    ['', /is empty/],
    ['   ', /is empty/],
    ['0s', /must be positive/],
    ['0 minutes', /must be positive/],
    ['-5m', /must be positive/],
    ['- 1h', /must be positive/],
    ['5', /"5" has no unit/],
    ['0', /"0" has no unit/],
    ['abc', /"abc" is not a number with a unit/],
    ['m5', /is not a number with a unit/],
    ['1e3ms', /"1e3ms" uses an exponent: a duration is a number and a unit/],
    ['1h30', /cannot read "30"/],
    ['5 fortnights', /unknown unit "fortnights"/],
    ['5 mo', /unknown unit "mo"/],
    ['0.0001ms', /rounds to zero milliseconds/],
    ['0.4ms', /rounds to zero milliseconds/],
    ['9999999999999999d', /too large/],
  ])('%j → %s', (text, why) => {
    expect(() => parseDuration(text)).toThrow(why);
  });

  it.each([
    [0, /must be positive/],
    [-1, /must be positive/],
    [0.4, /rounds to zero/],
    [Number.NaN, /finite/],
    [Number.POSITIVE_INFINITY, /finite/],
  ])('number %d → %s', (n, why) => {
    expect(() => parseDuration(n)).toThrow(why);
  });

  it.each([
    ['abc', '"abc" is not a number with a unit (use 500ms, 30s, 5m, 2h or 1d)'],
    ['abc5', '"abc5" is not a number with a unit (use 500ms, 30s, 5m, 2h or 1d)'],
    ['5 !', '"5 !" is not a number with a unit (use 500ms, 30s, 5m, 2h or 1d)'],
    ['x1h', '"x1h" is not a number with a unit (use 500ms, 30s, 5m, 2h or 1d)'],
    ['1h30', '"1h30" is not a number with a unit, cannot read "30" (use 500ms, 30s, 5m, 2h or 1d)'],
    ['1.5', '"1.5" has no unit (use ms, s, m, h or d, e.g. 1.5s)'],
    ['5 mo', '"5 mo" has an unknown unit "mo" (use ms, s, m, h or d)'],
    ['-5m', 'must be positive, got "-5m"'],
    ['-0s', 'must be positive, got "-0s"'],
    ['0h', 'must be positive, got "0h"'],
  ])('%j → exactly %j', (text, why) => {
    expect(() => parseDuration(text)).toThrow(why);
  });

  it.each(['1e3ms', '1E3ms', '12e3ms', '1e-3s', '1E+3s', '-1e3ms', '+1e3ms', '1.5e3s', '1.25e3s', '.5e3s', '.25e3s', '2e3', '1h 1e3ms'])(
    'names an exponent as the reason, in any term and with any sign: %j',
    (text) => {
      expect(() => parseDuration(text)).toThrow(`"${text}" uses an exponent`);
    },
  );

  it('refuses what is neither a string nor a number, naming the type', () => {
    expect(() => parseDuration({} as unknown as string)).toThrow('must be a string such as "30m", got object');
    expect(() => parseDuration(-3)).toThrow('must be positive, got -3');
  });

  it('throws DurationError, a TimingError', () => {
    let caught: unknown;
    try {
      parseDuration('soon');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(DurationError);
    expect(caught).toBeInstanceOf(TimingError);
    expect([(caught as Error).name, new TimingError('x').name]).toEqual(['DurationError', 'TimingError']);
  });
});

describe('formatDuration', () => {
  it('writes the shortest exact form', () => {
    expect(formatDuration(90_000)).toBe('90s');
    expect(formatDuration(3_600_000)).toBe('1h');
    expect(formatDuration(5_400_000)).toBe('90m');
    expect(formatDuration(86_400_000)).toBe('1d');
    expect(formatDuration(1500)).toBe('1500ms');
    expect(formatDuration(1000)).toBe('1s');
    expect(formatDuration(60_000)).toBe('1m');
    expect(formatDuration(0)).toBe('0ms');
  });

  it('round-trips through parseDuration', () => {
    for (const ms of [1, 999, 1000, 61_000, 3_600_000, 90_061_001, 172_800_000]) {
      expect(parseDuration(formatDuration(ms))).toBe(ms);
    }
  });
});
