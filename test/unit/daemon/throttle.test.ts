// The daemon's state file is saved at most once per period, and the last state always is.
import { describe, expect, it } from 'vitest';
import { throttle } from '../../../main/engine/daemon/throttle.js';
import { waitFor } from '../../helpers/wait.js';

describe('throttle', () => {
  it('a burst runs once at once and once more after the period, with what was asked last', async () => {
    let state = 0;
    const saved: number[] = [];
    const save = throttle(() => saved.push(state), 50);
    for (state = 1; state <= 100; state++) save();
    state = 100;
    expect(saved).toEqual([1]);
    await waitFor(() => saved.length === 2, 5000, 'the trailing save');
    expect(saved).toEqual([1, 100]);
  });

  it('cancel drops the pending call', async () => {
    let calls = 0;
    const save = throttle(() => calls++, 20);
    save();
    save();
    save.cancel();
    // A second throttle's trailing call comes after the first one's would have.
    let probed = 0;
    const probe = throttle(() => probed++, 60);
    probe();
    probe();
    await waitFor(() => probed === 2, 5000, 'the probe');
    expect(calls).toBe(1);
  });
});
