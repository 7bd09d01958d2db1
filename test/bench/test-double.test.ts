// The backend the pass benches use: the tests' double, with jobs that have exited 0 the moment they
// are submitted and no call recorded (so it adds nothing to the pass it times).
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../main/engine/clock.js';
import type { JobSpec } from '../../main/engine/backend.js';
import { TestBackend } from '../helpers/test-backend.js';

const spec = (runId: string) => ({ runId }) as JobSpec;

describe("the benches' backend double", () => {
  it('startAs done: polled done at once, fetched as exit 0 at the submit time', async () => {
    const clock = new ManualClock(1_000_000);
    const b = new TestBackend('local', { clock, startAs: 'done', record: false });
    const h = await b.submit(spec('r1'));
    clock.advance(5000);
    expect(await b.poll([h])).toEqual([{ state: 'done' }]);
    expect(await b.fetch(h)).toEqual({ exitCode: 0, signal: null, reason: null, startedAt: 1_000_000, endedAt: 1_000_000 });
    expect(b.launches()).toBe(1);
  });

  it('record false keeps no calls; the default records each', async () => {
    for (const record of [false, true]) {
      const b = new TestBackend('local', { startAs: 'done', record });
      await b.health();
      const h = await b.submit(spec('r1'));
      await b.poll([h]);
      expect(b.ops(), `record ${record}`).toEqual(record ? ['health', 'submit', 'poll'] : []);
    }
  });
});
