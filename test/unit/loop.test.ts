// The engine's loop: passes asked for while work flows are gathered (one pass for the nudges heard
// in one turn of the event loop), a pass asked for within a bound waits for one that comes anyway,
// and a stop ends the wait. Time is vitest's fake clock (but for the test of one turn): each step
// advances it and runs what fell due, so the counts are exact.
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { Loop } from '../../main/engine/loop.js';
import { waitFor } from '../helpers/wait.js';

beforeEach(() => {
  // setImmediate stays real: the loop's end-of-turn wait is one turn, not a fake millisecond.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});

afterEach(() => {
  vi.useRealTimers();
});

/** A loop whose passes are counted, its timed pass an hour away (every pass after the first is asked for). */
function counted() {
  const passes: number[] = [];
  const loop = new Loop({ intervalMs: 3_600_000, pass: async () => void passes.push(performance.now()) });
  return { loop, passes };
}

/** Advance the fake clock by `ms`, running the timers that fall due, then the turns after them. */
async function advance(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

it('serves the nudges heard in one turn of the event loop with one pass', async () => {
  // Real timers: timers due together run in one phase of one turn, as exits heard together do.
  vi.useRealTimers();
  const { loop, passes } = counted();
  loop.start();
  await waitFor(() => passes.length === 1, 5000, 'the first pass');
  const heard = new Promise<void>((resolve) => {
    for (let i = 0; i < 3; i++) setTimeout(() => loop.nudge(), 10);
    setTimeout(resolve, 10);
  });
  await heard;
  await waitFor(() => passes.length >= 2, 5000, 'the nudged pass');
  // A pass for each nudge would have run by now: each starts from the one before, without a timer.
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  expect(passes).toHaveLength(2);
  await loop.stop();
});

it('runs a pass asked for within a bound by then, with no nudge', async () => {
  const { loop, passes } = counted();
  loop.start();
  await advance(0);
  loop.nudgeWithin(50);
  await advance(49);
  expect(passes).toHaveLength(1);
  await advance(1);
  expect(passes).toHaveLength(2);
  await loop.stop();
});

it('serves a pass asked for within a bound by one nudged before then, not by one of its own', async () => {
  const { loop, passes } = counted();
  loop.start();
  await advance(0);
  loop.nudgeWithin(50);
  await advance(10);
  loop.nudge();
  await advance(0);
  expect(passes).toHaveLength(2);
  await advance(1000);
  expect(passes).toHaveLength(2);
  await loop.stop();
});

it('keeps the sooner of two bounds', async () => {
  const { loop, passes } = counted();
  loop.start();
  await advance(0);
  loop.nudgeWithin(20);
  loop.nudgeWithin(500);
  await advance(20);
  expect(passes).toHaveLength(2);
  await advance(1000);
  expect(passes).toHaveLength(2);
  await loop.stop();
});

it('a nudge during a pass is served right after it, once', async () => {
  const passes: number[] = [];
  let loop!: Loop;
  loop = new Loop({
    intervalMs: 3_600_000,
    pass: async () => {
      passes.push(performance.now());
      if (passes.length === 1) {
        loop.nudge();
        loop.nudgeWithin(500);
        loop.nudge();
      }
    },
  });
  loop.start();
  await advance(0);
  expect(passes).toEqual([0, 0]);
  await advance(1000);
  expect(passes).toHaveLength(2);
  await loop.stop();
});

it('a stop while a pass asked for is awaited ends the loop without that pass', async () => {
  const { loop, passes } = counted();
  loop.start();
  await advance(0);
  loop.nudgeWithin(50);
  await advance(10);
  await loop.stop();
  await advance(1000);
  expect(passes).toHaveLength(1);
  expect(loop.running).toBe(false);
});

it('still runs the timed pass at its interval', async () => {
  const passes: number[] = [];
  const loop = new Loop({ intervalMs: 1000, pass: async () => void passes.push(performance.now()) });
  loop.start();
  await advance(1000);
  await advance(1000);
  expect(passes).toEqual([0, 1000, 2000]);
  await loop.stop();
});
