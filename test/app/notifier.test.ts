// The Notifier's timer against the wall clock it reads: a timer may fire before the grouping
// window is over by Date.now() (timers run on the loop's cached clock, which lags on a busy loop).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Notifier } from '../../main/app/notifier.js';
import type { EventRow } from '../../main/engine/store/events.js';
import { waitFor } from '../helpers/wait.js';
import * as fake from './fake-electron.js';

vi.mock('electron', async () => (await import('./fake-electron.js')).electron);

const failed = (path: string): EventRow => ({ id: 1, at: 0, level: 'error', type: 'run:failed', routineId: `me@host:${path}`, runId: null, jobId: null, message: 'failed: exit 1', data: null });

let notifier: Notifier | null = null;
afterEach(() => {
  notifier?.stop();
  fake.notifications.splice(0);
});

describe('Notifier', () => {
  it('a timer that fires early by the wall clock waits out the rest of the window, then shows', async () => {
    let wall = 1_000;
    let reads = 0;
    const opened: string[] = [];
    notifier = new Notifier((t) => opened.push(t), '/icon.png', { groupWindowMs: 20 }, () => (reads++, wall));
    notifier.offer(failed('a/one'));
    // The 20 ms timer fires (the flush reads the clock) while the wall clock says 10 ms have passed.
    wall += 10;
    const offered = reads;
    await waitFor(() => reads > offered, 5_000, 'the timer to fire');
    expect(fake.notifications).toHaveLength(0);
    // Once the wall clock is past the window, the notification comes without another event.
    wall += 20;
    await waitFor(() => fake.notifications.length === 1, 5_000, 'the notification');
    expect(fake.notifications[0]!.options).toMatchObject({ title: 'a/one failed', body: 'failed: exit 1' });
    fake.notifications[0]!.emit('click');
    expect(opened).toEqual(['#/routine/me%40host%3Aa%2Fone']);
  });

  it('after a window closes, the next failure opens a new one and is shown', async () => {
    let wall = 0;
    notifier = new Notifier(() => undefined, '/icon.png', { groupWindowMs: 5, perRoutineMs: 0 }, () => wall);
    notifier.offer(failed('a/one'));
    wall += 5;
    await waitFor(() => fake.notifications.length === 1, 5_000, 'the first notification');
    notifier.offer(failed('b/two'));
    wall += 5;
    await waitFor(() => fake.notifications.length === 2, 5_000, 'the second notification');
    expect(fake.notifications[1]!.options.title).toBe('b/two failed');
  });
});
