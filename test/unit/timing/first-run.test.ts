// defaultFirstRunAt: a routine's first run instant on a local day, by the scheduler's rules.
import { describe, expect, it } from 'vitest';
import type { Timing } from '../../../main/engine/domain/types.js';
import type { DepRoutine } from '../../../main/engine/graph/dependencies.js';
import { defaultFirstRunAt } from '../../../main/engine/timing/first-run.js';

function r(id: string, dependencies: string[] = [], extra: Partial<DepRoutine> = {}): DepRoutine {
  return { id, schedule: 'main', kind: 'batch', dependencies, timing: null, tz: 'UTC', ...extra };
}
const at = (...runtimes: string[]): { timing: Timing } => ({ timing: { mode: 'runtimes', runtimes } });
const DAY = '2025-03-10';
const utc = (hhmm: string) => Date.parse(`${DAY}T${hhmm}:00Z`);

describe('defaultFirstRunAt', () => {
  it('reads an `at` timing only on its own local day', () => {
    const one = r('one', [], { timing: { mode: 'at', at: '2025-03-10T22:30:00-05:00' }, tz: 'America/Chicago' });
    expect(defaultFirstRunAt(one, '2025-03-10')).toBe(Date.parse('2025-03-11T03:30:00Z'));
    expect(defaultFirstRunAt(one, '2025-03-11')).toBe(null);
    expect(defaultFirstRunAt(one, '2025-03-09')).toBe(null);
  });

  it('skips malformed run times and unknown time zones', () => {
    expect(defaultFirstRunAt(r('x', [], at('25:00', '7:00', '10:15')), DAY)).toBe(utc('10:15'));
    expect(defaultFirstRunAt(r('x', [], { ...at('10:00'), tz: 'Mars/Olympus' }), DAY)).toBe(null);
  });

  it('keeps only whole HH:MM entries (00:00 to 23:59), whatever surrounds or follows them', () => {
    expect(defaultFirstRunAt(r('x', [], at('x09:00', '09:00x', '24:00', '23:60', '0a:00', '23:59')), DAY)).toBe(utc('23:59'));
    expect(defaultFirstRunAt(r('x', [], at('09:5x', '25:00', '21:00')), DAY)).toBe(utc('21:00'));
    expect(defaultFirstRunAt(r('x', [], at('06:30')), DAY)).toBe(utc('06:30'));
  });

  it('is null when no run time is well formed', () => {
    expect(defaultFirstRunAt(r('x', [], at('7:00', '25:00')), DAY)).toBe(null);
  });

  it('a run at local midnight is on that day', () => {
    expect(defaultFirstRunAt(r('x', [], at('00:00')), DAY)).toBe(utc('00:00'));
    expect(defaultFirstRunAt(r('x', [], { timing: { mode: 'cron', cron: '0 0 * * *' } }), DAY)).toBe(utc('00:00'));
  });

  it('is null for a routine without a timing, an `every` loop, or a day not written YYYY-MM-DD', () => {
    expect(defaultFirstRunAt(r('x'), DAY)).toBe(null);
    expect(defaultFirstRunAt(r('x', [], { timing: { mode: 'every', everyMs: 60_000 } }), DAY)).toBe(null);
    for (const day of ['2025-3-10', '25-03-10', '2025-03-1', 'yyyy-mm-dd', '2025/03/10', 'x2025-03-10', '2025-03-10x', '12025-03-10']) expect(defaultFirstRunAt(r('x', [], at('10:00')), day)).toBe(null);
  });

  it('is null when the routine next runs on a later day than the one asked about', () => {
    const mondays = r('x', [], { timing: { mode: 'cron', cron: '0 9 * * 1' } });
    expect(defaultFirstRunAt(mondays, '2025-03-10')).toBe(utc('09:00'));
    expect(defaultFirstRunAt(mondays, '2025-03-11')).toBe(null);
  });

  it('is null for a timing that cannot be read', () => {
    expect(defaultFirstRunAt(r('x', [], { timing: { mode: 'at', at: 'soon' } }), DAY)).toBe(null);
    expect(defaultFirstRunAt(r('x', [], { timing: { mode: 'cron', cron: '61 * * * *' } }), DAY)).toBe(null);
  });

  it('is null on a day the timing does not fire', () => {
    // 2025-03-10 is a Monday.
    expect(defaultFirstRunAt(r('x', [], { timing: { mode: 'cron', cron: '0 9 * * 0' } }), DAY)).toBe(null);
  });
});

describe('defaultFirstRunAt follows the scheduler across DST', () => {
  it('fires a skipped fixed time at the first valid instant after it (spring forward)', () => {
    // 2025-03-09 02:30 does not exist in New York: it fires at 03:00 EDT (07:00Z), as the scheduler does.
    expect(defaultFirstRunAt(r('x', [], { timing: { mode: 'runtimes', runtimes: ['02:30'] }, tz: 'America/New_York' }), '2025-03-09')).toBe(Date.parse('2025-03-09T07:00:00Z'));
  });

  it('takes the first occurrence of a repeated time (fall back)', () => {
    expect(defaultFirstRunAt(r('x', [], { timing: { mode: 'runtimes', runtimes: ['01:30'] }, tz: 'America/New_York' }), '2025-11-02')).toBe(Date.parse('2025-11-02T05:30:00Z'));
  });

  it('reads cron timings too', () => {
    expect(defaultFirstRunAt(r('x', [], { timing: { mode: 'cron', cron: '15 9 * * *' }, tz: 'Europe/Paris' }), '2025-07-01')).toBe(Date.parse('2025-07-01T07:15:00Z'));
  });
});
