import { afterEach, describe, expect, it } from 'vitest';
import { Fixture, HOUR, SEC } from '../../helpers/engine-fixture.js';

describe('sleep and clock jumps', () => {
  let f: Fixture;
  afterEach(() => f.close());

  it('notices the jump once, applies each misfire policy once and spreads the catch-up starts', async () => {
    f = new Fixture();
    for (const [i, misfire] of ['once', 'once', 'once', 'skip', 'all'].entries()) f.define({ id: `r${i}`, cron: '0 * * * *', misfire });
    await f.pass();
    f.advance(5 * HOUR + 30 * SEC); // the laptop slept through five run times
    await f.pass();

    const jumps = f.events('clock:jump');
    expect(jumps).toHaveLength(1);
    expect(jumps[0]!.message).toMatch(/jumped ahead by 18030s/);
    expect(f.runs('r0')).toHaveLength(1);
    expect(f.runs('r3')).toHaveLength(0);
    expect(f.runs('r4')).toHaveLength(5);

    const catchUps = ['r0', 'r1', 'r2', 'r4'].flatMap((r) => f.runs(r));
    const starts = catchUps.map((r) => r.notBefore ?? r.createdAt).sort((a, b) => a - b);
    expect(new Set(starts).size).toBe(starts.length);
    expect(starts[starts.length - 1]! - starts[0]!).toBe((starts.length - 1) * 500);
    // Only the first catch-up may start at once; the rest wait their turn.
    expect(f.backend.calls.filter((c) => c.op === 'submit')).toHaveLength(1);
    f.advance(500);
    await f.pass();
    expect(f.backend.calls.filter((c) => c.op === 'submit').length).toBeGreaterThanOrEqual(2);
  });

  it('says nothing when wall time and monotonic time agree', async () => {
    f = new Fixture({ options: { clockJumpMs: 10 * HOUR } });
    f.define({ id: 'r', cron: '0 * * * *' });
    await f.pass();
    f.advance(2 * HOUR);
    await f.pass();
    expect(f.events('clock:jump')).toHaveLength(0);
  });
});
