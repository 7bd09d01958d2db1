import { describe, expect, it } from 'vitest';
import { DurationError } from '../../../main/engine/timing/duration.js';
import { parseAt, resolveIn } from '../../../main/engine/timing/next.js';

const utc = (iso: string): number => Date.parse(iso);

describe('parseAt', () => {
  it.each([
    ['2025-06-10T12:00:00Z', 'UTC', '2025-06-10T12:00:00.000Z'],
    ['2025-06-10T12:00:00.250Z', 'UTC', '2025-06-10T12:00:00.250Z'],
    ['2025-06-10t12:00:00z', 'UTC', '2025-06-10T12:00:00.000Z'],
    ['2025-06-10T14:00:00+02:00', 'America/New_York', '2025-06-10T12:00:00.000Z'],
    ['2025-06-10T14:00+0200', 'America/New_York', '2025-06-10T12:00:00.000Z'],
    ['2025-06-10T14:00+02', 'America/New_York', '2025-06-10T12:00:00.000Z'],
    ['2025-06-10T07:30-04:30', 'UTC', '2025-06-10T12:00:00.000Z'],
    ['2025-06-10 14:00', 'Europe/Berlin', '2025-06-10T12:00:00.000Z'],
    ['2025-06-10T14:00:30.5', 'Europe/Berlin', '2025-06-10T12:00:30.500Z'],
    ['2025-06-10', 'Asia/Tokyo', '2025-06-09T15:00:00.000Z'],
    ['2025-01-10T09:00', 'America/New_York', '2025-01-10T14:00:00.000Z'],
    ['2024-02-29T00:00Z', 'UTC', '2024-02-29T00:00:00.000Z'],
    [' 2025-06-10T12:00Z ', 'UTC', '2025-06-10T12:00:00.000Z'],
  ])('%j in %s → %s', (at, tz, expected) => {
    expect(new Date(parseAt(at, tz)).toISOString()).toBe(expected);
  });

  it.each([
    ['', /is empty/],
    ['tomorrow', /"tomorrow" is not an ISO 8601 date-time/],
    ['Mon, 10 Jun 2025 12:00:00 GMT', /is not an ISO 8601 date-time/],
    ['2025-06-10T12', /is not an ISO 8601 date-time/],
    ['2025-06-10Z', /is not an ISO 8601 date-time/],
    ['2025-6-10T12:00', /is not an ISO 8601 date-time/],
    ['2025-13-01', /month 13 is out of range/],
    ['2025-00-01', /month 0 is out of range/],
    ['2025-02-29T10:00', /day 29 does not exist in 2025-02 \(it has 28 days\)/],
    ['2025-04-31', /day 31 does not exist in 2025-04/],
    ['2025-06-00', /day 0 does not exist/],
    ['2025-06-10T24:00', /hour 24 is out of range/],
    ['2025-06-10T12:60', /minute 60 is out of range/],
    ['2025-06-10T12:00:60Z', /second 60 is out of range/],
    ['2025-06-10T12:00+25:00', /offset \+25:00 is out of range/],
  ])('rejects %j: %s', (at, why) => {
    expect(() => parseAt(at, 'UTC')).toThrow(why);
  });

  it('rejects an unknown zone', () => {
    expect(() => parseAt('2025-06-10T12:00', 'Atlantis/Capital')).toThrow(/unknown time zone "Atlantis\/Capital"/);
  });
});

describe('resolveIn turns `in` into an ISO UTC `at`', () => {
  const now = utc('2025-06-10T12:00:00Z');
  it.each([
    ['5 minutes', '2025-06-10T12:05:00.000Z'],
    ['90m', '2025-06-10T13:30:00.000Z'],
    ['1d', '2025-06-11T12:00:00.000Z'],
    ['500ms', '2025-06-10T12:00:00.500Z'],
    ['1h30m', '2025-06-10T13:30:00.000Z'],
  ])('%s → %s', (d, expected) => {
    expect(resolveIn(d, now)).toBe(expected);
  });

  it('rejects bad durations with the reason', () => {
    expect(() => resolveIn('0s', now)).toThrow(DurationError);
    expect(() => resolveIn('0s', now)).toThrow(/must be positive/);
    expect(() => resolveIn('-5m', now)).toThrow(/must be positive/);
    expect(() => resolveIn('later', now)).toThrow(/is not a number with a unit/);
    expect(() => resolveIn('5m', Number.NaN)).toThrow(/finite/);
  });
});
