import { describe, expect, it } from 'vitest';
import { pausePlan, resumePlan, schedulingPaused } from '../../main/app/pause.js';

describe('pause scheduling', () => {
  it('is paused only when there are schedules and every one is observe-only', () => {
    expect(schedulingPaused([])).toBe(false);
    expect(schedulingPaused([{ name: 'a', mode: 'observe' }, { name: 'b', mode: 'active' }])).toBe(false);
    expect(schedulingPaused([{ name: 'a', mode: 'observe' }, { name: 'b', mode: 'observe' }])).toBe(true);
  });

  it('pausing switches the active schedules to observe-only and remembers them', () => {
    expect(pausePlan([{ name: 'a', mode: 'active' }, { name: 'kept', mode: 'observe' }, { name: 'b', mode: 'active' }])).toEqual({
      changes: [{ name: 'a', mode: 'observe' }, { name: 'b', mode: 'observe' }],
      remember: ['a', 'b'],
    });
  });

  it('resuming gives back what pausing took: a schedule observed on purpose stays observed', () => {
    const before = [{ name: 'a', mode: 'active' as const }, { name: 'kept', mode: 'observe' as const }];
    const { remember } = pausePlan(before);
    const paused = [{ name: 'a', mode: 'observe' as const }, { name: 'kept', mode: 'observe' as const }];
    expect(resumePlan(paused, remember)).toEqual([{ name: 'a', mode: 'active' }]);
  });

  it('with nothing remembered, resume means every schedule active', () => {
    expect(resumePlan([{ name: 'a', mode: 'observe' }, { name: 'b', mode: 'observe' }], [])).toEqual([{ name: 'a', mode: 'active' }, { name: 'b', mode: 'active' }]);
    expect(resumePlan([{ name: 'a', mode: 'observe' }], ['gone'])).toEqual([{ name: 'a', mode: 'active' }]);
  });
});
