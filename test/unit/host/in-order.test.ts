// The host's stop runs its steps through runInOrder: one failing step must not skip the store's
// close or the release of the data dir's claim after it.
import { describe, expect, it } from 'vitest';
import { runInOrder } from '../../../main/engine/host/in-order.js';

describe('runInOrder', () => {
  it('runs the steps after a failing one, in order, and names the failure in the log', async () => {
    const ran: string[] = [];
    const lines: string[] = [];
    const failed = await runInOrder(
      [
        ['first', () => ran.push('first')],
        ['webhook delivery', async () => {
          ran.push('webhooks');
          throw new Error('queue closed twice');
        }],
        ['the store', async () => {
          await Promise.resolve();
          ran.push('store');
        }],
        ['the claim', () => ran.push('claim')],
      ],
      (l) => lines.push(l),
    );
    expect(ran).toEqual(['first', 'webhooks', 'store', 'claim']);
    expect(failed).toEqual(['webhook delivery']);
    expect(lines).toEqual(['stopping: webhook delivery failed: queue closed twice']);
  });

  it('awaits each step before the next starts', async () => {
    const ran: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const done = runInOrder(
      [
        ['slow', async () => {
          await gate;
          ran.push('slow');
        }],
        ['next', () => ran.push('next')],
      ],
      () => undefined,
    );
    await Promise.resolve();
    expect(ran).toEqual([]);
    release();
    await done;
    expect(ran).toEqual(['slow', 'next']);
  });

  it('logs nothing and reports no failure when every step succeeds', async () => {
    const lines: string[] = [];
    expect(await runInOrder([['a', () => undefined], ['b', async () => undefined]], (l) => lines.push(l))).toEqual([]);
    expect(lines).toEqual([]);
  });
});
