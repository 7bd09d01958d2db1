// UTC is known without Intl: a daemon whose routines run in UTC never builds a date formatter, so
// ICU's locale and zone data (some 8 MiB resident) stay out of its memory. Each test imports a
// fresh copy of the timing modules, so no formatter cached by another test hides one built here.
import { afterEach, describe, expect, it, vi } from 'vitest';

const RealDateTimeFormat = Intl.DateTimeFormat;
/** Counts the date formatters built from now on (each still a real one). */
function countFormatters(): { built: number } {
  const count = { built: 0 };
  Intl.DateTimeFormat = function (...args: ConstructorParameters<typeof Intl.DateTimeFormat>) {
    count.built++;
    return new RealDateTimeFormat(...args);
  } as unknown as typeof Intl.DateTimeFormat;
  return count;
}

async function freshTiming() {
  vi.resetModules();
  const tz = await import('../../../main/engine/timing/tz.js');
  const next = await import('../../../main/engine/timing/next.js');
  return { ...tz, ...next };
}

afterEach(() => {
  Intl.DateTimeFormat = RealDateTimeFormat;
});

describe('UTC without Intl', () => {
  for (const zone of ['UTC', 'Etc/UTC']) {
    it(`${zone}: valid, offset 0 at any instant, and a cron routine's next run, the local day and wall time worked out without a date formatter`, async () => {
      const t = await freshTiming();
      const formatters = countFormatters();
      expect(t.isValidTimeZone(zone)).toBe(true);
      expect(t.offsetAt(Date.UTC(2025, 2, 30, 1, 30), zone)).toBe(0);
      expect(t.hourOffset(-1_000_000, zone)).toBe(0);
      expect(t.nextRunAt({ mode: 'cron', cron: '5 3 * * *' }, Date.UTC(2026, 0, 1, 3, 5), zone)).toBe(Date.UTC(2026, 0, 2, 3, 5));
      expect(t.nextRunAt({ mode: 'runtimes', runtimes: ['23:59'] }, Date.UTC(2026, 5, 30, 12), zone)).toBe(Date.UTC(2026, 5, 30, 23, 59));
      expect(t.localToUtc({ year: 2025, month: 10, day: 26, hour: 2, minute: 30 }, zone)).toBe(Date.UTC(2025, 9, 26, 2, 30));
      expect(t.cycleDay(Date.UTC(2025, 11, 31, 23, 59, 59), zone)).toBe('2025-12-31');
      expect(t.wallTime(Date.UTC(2024, 1, 29, 7, 8, 9), zone)).toMatchObject({ year: 2024, month: 2, day: 29, hour: 7, minute: 8, second: 9, weekday: 4 });
      expect(formatters.built).toBe(0);
    });
  }

  it('any other zone, even one that never leaves UTC+0, is still read through Intl', async () => {
    const t = await freshTiming();
    const formatters = countFormatters();
    expect(t.offsetAt(Date.UTC(2025, 0, 15), 'Etc/GMT')).toBe(0);
    expect(t.offsetAt(Date.UTC(2025, 6, 15), 'Europe/London')).toBe(3_600_000);
    expect(formatters.built).toBeGreaterThan(0);
  });
});
