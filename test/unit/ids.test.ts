// Run-directory days (main/engine/ids.ts). utcDay remembers the last day it was asked
// for (a pass asks for the same one per run): the answer must not depend on what was asked before.
import { expect, it } from 'vitest';
import { utcDay } from '../../main/engine/ids.js';

it('utcDay is the UTC day of the instant, whatever day was asked for before', () => {
  const midnight = Date.parse('2026-06-02T00:00:00Z');
  const asked = [midnight - 1, midnight, midnight - 1, midnight + 86_399_999, midnight + 86_400_000, Date.parse('1969-12-31T23:59:59.999Z'), 0, midnight];
  expect(asked.map(utcDay)).toEqual(['2026-06-01', '2026-06-02', '2026-06-01', '2026-06-02', '2026-06-03', '1969-12-31', '1970-01-01', '2026-06-02']);
  for (const ms of asked) expect(utcDay(ms)).toBe(new Date(ms).toISOString().slice(0, 10));
});

