// machineDayBounds (Date's local time, no Intl formatter) gives what dayBounds gives for the
// machine's zone, on ordinary days and on DST days, also where DST begins at midnight.
import { afterEach, describe, expect, it } from 'vitest';
import { dayBounds, machineDayBounds } from '../../../main/engine/timing/day.js';

const before = process.env.TZ;
afterEach(() => {
  if (before === undefined) delete process.env.TZ;
  else process.env.TZ = before;
});

describe('machineDayBounds', () => {
  // Santiago, Havana and Beirut start DST at midnight (the day begins at 01:00); Lord Howe moves by 30 min.
  for (const zone of ['UTC', 'Europe/Paris', 'America/New_York', 'America/Santiago', 'America/Havana', 'Asia/Beirut', 'Australia/Lord_Howe', 'Asia/Kolkata', 'Pacific/Kiritimati']) {
    it(`equals dayBounds in ${zone} every 7 h 0 m 17 s over three years`, () => {
      process.env.TZ = zone; // Node resets Date's zone cache on assignment
      let checked = 0;
      for (let t = Date.UTC(2023, 0, 1); t < Date.UTC(2026, 0, 1); t += 7 * 3_600_000 + 17_000) {
        expect(machineDayBounds(t)).toEqual(dayBounds(t, undefined, zone));
        checked++;
      }
      expect(checked).toBeGreaterThan(3000);
    });
  }

  it('a day that starts at 01:00 (Santiago, 2024-09-08) is 23 hours long', () => {
    process.env.TZ = 'America/Santiago';
    const b = machineDayBounds(Date.UTC(2024, 8, 8, 12));
    expect(b.day).toBe('2024-09-08');
    expect(new Date(b.from).toISOString()).toBe('2024-09-08T04:00:00.000Z');
    expect(b.to - b.from).toBe(23 * 3_600_000);
  });
});
