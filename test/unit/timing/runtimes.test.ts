import { describe, expect, it } from 'vitest';
import { nextRuns, parseRuntimes } from '../../../main/engine/timing/next.js';

describe('parseRuntimes', () => {
  it('normalises, sorts and deduplicates', () => {
    expect(parseRuntimes('07:00,19:30')).toEqual(['07:00', '19:30']);
    expect(parseRuntimes(' 19:30 , 7:00 ,07:00')).toEqual(['07:00', '19:30']);
    expect(parseRuntimes(['19:30', '07:00', '7:00'])).toEqual(['07:00', '19:30']);
    expect(parseRuntimes(['23:59', '00:00'])).toEqual(['00:00', '23:59']);
    expect(parseRuntimes(['12:00,06:00', '09:15'])).toEqual(['06:00', '09:15', '12:00']);
  });

  it.each([
    ['24:00', /"24:00": hour 24 is out of range 00-23/],
    ['12:60', /"12:60": minute 60 is out of range 00-59/],
    ['7', /"7" is not a time of day/],
    ['07:00:00', /"07:00:00" is not a time of day/],
    ['7:5', /"7:5" is not a time of day/],
    ['noon', /"noon" is not a time of day/],
    ['-1:00', /is not a time of day/],
    ['', /no times given/],
    ['07:00,', /empty entry/],
    ['07:00,,08:00', /empty entry/],
  ])('rejects %j: %s', (input, why) => {
    expect(() => parseRuntimes(input)).toThrow(why);
  });

  it('pads hours and minutes', () => {
    expect(parseRuntimes('7:05, 0:00, 9:30')).toEqual(['00:00', '07:05', '09:30']);
  });

  it.each([
    ['x07:00', '"x07:00" is not a time of day (use HH:MM, 00:00 to 23:59)'],
    ['07:00x', '"07:00x" is not a time of day (use HH:MM, 00:00 to 23:59)'],
    ['123:00', '"123:00" is not a time of day (use HH:MM, 00:00 to 23:59)'],
    ['07:000', '"07:000" is not a time of day (use HH:MM, 00:00 to 23:59)'],
  ])('rejects %j whole', (input, why) => {
    expect(() => parseRuntimes(input)).toThrow(why);
  });

  it('names the whole input when an entry is empty, for a string and for a list', () => {
    expect(() => parseRuntimes('07:00,')).toThrow('empty entry in "07:00,"');
    expect(() => parseRuntimes(['07:00', ''])).toThrow('empty entry in "07:00,"');
  });

  it('refuses what is neither a string nor a list of strings, naming the type', () => {
    expect(() => parseRuntimes(['07:00', 7 as unknown as string])).toThrow('expected HH:MM strings, got number');
    expect(() => parseRuntimes(7 as unknown as string)).toThrow('expected "HH:MM,HH:MM" or a list of HH:MM, got number');
    expect(() => parseRuntimes(' ')).toThrow('no times given (use HH:MM, e.g. 07:00,19:30)');
  });

  it('rejects an empty list', () => {
    expect(() => parseRuntimes([])).toThrow(/no times given/);
  });
});

describe('runtimes fire daily at each local time', () => {
  it('in New York in summer (UTC-4)', () => {
    const out = nextRuns({ mode: 'runtimes', runtimes: ['07:00', '19:30'] }, Date.parse('2025-06-10T12:00:00Z'), 'America/New_York', 3);
    expect(out.map((t) => new Date(t).toISOString())).toEqual([
      '2025-06-10T23:30:00.000Z',
      '2025-06-11T11:00:00.000Z',
      '2025-06-11T23:30:00.000Z',
    ]);
  });

  it('strictly after the reference', () => {
    const out = nextRuns({ mode: 'runtimes', runtimes: ['12:00'] }, Date.parse('2025-06-10T12:00:00Z'), 'UTC', 1);
    expect(out).toEqual([Date.parse('2025-06-11T12:00:00Z')]);
  });

  it('a time with minutes fires at that minute', () => {
    const out = nextRuns({ mode: 'runtimes', runtimes: ['09:45', '18:05'] }, Date.parse('2025-06-10T12:00:00Z'), 'UTC', 2);
    expect(out.map((t) => new Date(t).toISOString())).toEqual(['2025-06-10T18:05:00.000Z', '2025-06-11T09:45:00.000Z']);
  });

  it('rejects unnormalised garbage stored in a timing', () => {
    expect(() => nextRuns({ mode: 'runtimes', runtimes: ['25:00'] }, 0, 'UTC', 1)).toThrow(/hour 25/);
  });
});
