// The calendar search itself, for what cron and runtimes cannot reach: they refuse a schedule that
// never fires before it gets here, so only a direct call can ask for a date that does not exist.
import { expect, it } from 'vitest';
import { nextMatch, type CalendarSpec } from '../../../main/engine/timing/calendar.js';

const onlyOn = (month: number, day: number): CalendarSpec => {
  const months: boolean[] = [];
  const daysOfMonth: boolean[] = [];
  months[month] = true;
  daysOfMonth[day] = true;
  return { times: [0], months, daysOfMonth, daysOfWeek: null, wildcard: false };
};

it('a date that never comes (30 February) has no next match: null, not a number', () => {
  expect(nextMatch(onlyOn(2, 30), Date.parse('2025-01-01T00:00:00Z'), 'UTC')).toBeNull();
});

it('29 February is found across the skipped leap year 2100', () => {
  expect(nextMatch(onlyOn(2, 29), Date.parse('2096-03-01T00:00:00Z'), 'Pacific/Kiritimati')).toBe(
    Date.parse('2104-02-28T10:00:00Z'), // 00:00 on 29 February 2104 at UTC+14
  );
});
