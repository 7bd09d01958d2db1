// The timeline's day is the browser's own local day: the same bounds the engine computes for
// that zone, DST days included (the renderer no longer borrows the engine's timing code).
import { afterEach, describe, expect, it } from 'vitest';
import { dayBounds } from '../../../main/engine/timing/day.js';
import { localDay } from '../../../renderer/src/store/timeline.js';

const saved = process.env.TZ;
afterEach(() => {
  if (saved === undefined) delete process.env.TZ;
  else process.env.TZ = saved;
});

describe('localDay', () => {
  for (const [tz, at, hours] of [
    ['Europe/Berlin', '2026-03-29T12:00:00Z', 23],
    ['Europe/Berlin', '2026-10-25T12:00:00Z', 25],
    ['America/New_York', '2026-11-01T12:00:00Z', 25],
    ['America/New_York', '2026-11-01T03:30:00Z', 24],
    ['Asia/Kolkata', '2026-06-01T20:00:00Z', 24],
    ['UTC', '2026-12-01T23:59:59Z', 24],
  ] as const) {
    it(`${tz} around ${at}: ${hours} hours, as the engine says`, () => {
      process.env.TZ = tz;
      const now = Date.parse(at);
      const got = localDay(now);
      const want = dayBounds(now, undefined, tz);
      expect(got).toEqual({ from: want.from, to: want.to });
      expect((got.to - got.from) / 3_600_000).toBe(hours);
      expect(got.from <= now && now < got.to).toBe(true);
    });
  }
});
