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
    ['0000-06-15T12:00', 'UTC', '0000-06-15T12:00:00.000Z'],
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

  it.each([
    ['2025-12-31T23:59:59Z', '2025-12-31T23:59:59.000Z'],
    ['2025-04-30T00:00Z', '2025-04-30T00:00:00.000Z'],
    ['2025-01-01T00:00:00Z', '2025-01-01T00:00:00.000Z'],
    ['2000-02-29T12:00Z', '2000-02-29T12:00:00.000Z'],
    ['2025-06-10T12:00:00,25Z', '2025-06-10T12:00:00.250Z'],
    ['2025-06-10T12:00:00.2506Z', '2025-06-10T12:00:00.251Z'],
    ['2025-06-10T12:00:00.123456789Z', '2025-06-10T12:00:00.123Z'],
    ['2025-06-10T12:00 Z', '2025-06-10T12:00:00.000Z'],
    ['2025-06-10T23:59+23:59', '2025-06-10T00:00:00.000Z'],
    ['2025-06-10T00:00-02', '2025-06-10T02:00:00.000Z'],
  ])('the edges %j → %s', (at, expected) => {
    expect(new Date(parseAt(at, 'UTC')).toISOString()).toBe(expected);
  });

  it.each([
    ['1900-02-29', '"1900-02-29": day 29 does not exist in 1900-02 (it has 28 days)'],
    ['2100-02-29', '"2100-02-29": day 29 does not exist in 2100-02 (it has 28 days)'],
    ['2025-06-10T12:00+01:60', '"2025-06-10T12:00+01:60": offset +01:60 is out of range'],
    ['2025-06-10T12:00+24', '"2025-06-10T12:00+24": offset +24 is out of range'],
    ['x2025-06-10', '"x2025-06-10" is not an ISO 8601 date-time (e.g. 2025-03-09T14:30, 2025-03-09T14:30:00Z or 2025-03-09T14:30+01:00)'],
    ['2025-06-10T12:00Zx', 'is not an ISO 8601 date-time'],
    ['2025-06-10x12:00', 'is not an ISO 8601 date-time'],
    ['2025-06-10T12:00:00.1234567890Z', 'is not an ISO 8601 date-time'],
    ['2025-06-10T12:00:00.Z', 'is not an ISO 8601 date-time'],
    ['2025-06-10T12:00+1', 'is not an ISO 8601 date-time'],
    ['2025-06-10T12:00+01:0', 'is not an ISO 8601 date-time'],
    ['20255-06-10', 'is not an ISO 8601 date-time'],
    ['2025-06-10T1:00', 'is not an ISO 8601 date-time'],
    ['2025-06-10T12:0', 'is not an ISO 8601 date-time'],
    ['2025-06-10T12:00:0', 'is not an ISO 8601 date-time'],
    ['2025-06-1', 'is not an ISO 8601 date-time'],
    ['   ', 'is empty (e.g. 2025-03-09T14:30, 2025-03-09T14:30:00Z or 2025-03-09T14:30+01:00)'],
    ['2025-06-10T24:00', '"2025-06-10T24:00": hour 24 is out of range 00-23'],
    ['2025-06-10T12:60', '"2025-06-10T12:60": minute 60 is out of range 00-59'],
    ['2025-06-10T12:00:60', '"2025-06-10T12:00:60": second 60 is out of range 00-59'],
    ['2025-13-10', '"2025-13-10": month 13 is out of range 01-12'],
  ])('rejects %j exactly: %s', (at, why) => {
    expect(() => parseAt(at, 'UTC')).toThrow(why);
  });

  it('refuses a value that is not a string, naming its type', () => {
    expect(() => parseAt(20250610 as unknown as string, 'UTC')).toThrow('expected an ISO 8601 date-time string, got number');
  });

  it('the same local text is a different instant in another zone', () => {
    expect(new Date(parseAt('2025-06-10T12:00', 'UTC')).toISOString()).toBe('2025-06-10T12:00:00.000Z');
    expect(new Date(parseAt('2025-06-10T12:00', 'Asia/Tokyo')).toISOString()).toBe('2025-06-10T03:00:00.000Z');
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
    expect(() => resolveIn('5m', Number.NaN)).toThrow('reference time must be a finite number of epoch milliseconds, got NaN');
  });
});
