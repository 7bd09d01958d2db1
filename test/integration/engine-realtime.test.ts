// Realtime supervision with real processes: the first restart after an exit comes from the exit
// nudge (the timed pass is a minute away), heartbeat silence stops and restarts the routine,
// quick deaths back off 1 s, 2 s, 4 s, and the fifth quick death in a row is a crash loop: ERROR,
// no restart until restarted by hand.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CRASH_LOOP } from '../../main/engine/scheduler/check.js';
import { waitFor } from '../helpers/wait.js';
import { EngineHarness, FIX, alive, epochMs, lines, pidRecord, sessionAlive } from '../helpers/engine-harness.js';

let h: EngineHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

/** "start <n> <t> <pid>" / "die <n> <t>" lines of lives.sh. */
function stamps(file: string) {
  const starts = new Map<number, { at: number; pid: number }>();
  const deaths = new Map<number, number>();
  for (const l of lines(file)) {
    const [kind, n, t, pid] = l.split(' ');
    if (kind === 'start') starts.set(Number(n), { at: epochMs(t!), pid: Number(pid) });
    if (kind === 'die') deaths.set(Number(n), epochMs(t!));
  }
  return { starts, deaths };
}

describe('restart on exit', () => {
  it('restarts a realtime routine at once when its process exits: the exit nudges a pass', async () => {
    // A timed pass only every minute: only the exit nudge can bring the restart within the deadline.
    h = new EngineHarness({ intervalMs: 60_000 });
    const file = join(h.dir, 'stamps');
    h.define('rt/once', { realtime: true, command: FIX('lives.sh'), args: [file, '0.3'] });
    const first = await h.waitRun('rt/once', (r) => r.status === 'RUNNING' || r.status === 'EXITED', 15_000, 'the first instance');

    const second = await h.waitRun('rt/once', (r) => r.id !== first.id && r.status === 'RUNNING', 10_000, 'the second instance, RUNNING');
    const ended = h.run(first.id);
    expect(ended).toMatchObject({ status: 'EXITED', exitCode: 1, signal: null, reason: 'exit 1' });
    expect(h.passes).toBeGreaterThanOrEqual(2);

    // The new process really is a new process, recorded in its own job directory.
    const rec1 = pidRecord(ended.runDir!);
    const rec2 = await waitFor(() => pidRecord(second.runDir!), 5000, 'pid.json of the second instance');
    expect(second.runDir).not.toBe(ended.runDir);
    expect(rec2.pid).not.toBe(rec1?.pid);
    expect(alive(rec2.pid)).toBe(true);
    const { starts, deaths } = await waitFor(() => (stamps(file).starts.has(2) ? stamps(file) : null), 5000, 'the second process to note its start');
    expect(starts.get(2)?.pid).toBe(rec2.pid);
    // The gap from death to the new process (measured, not asserted: see bench/restart.ts).
    console.log(`first restart: ${starts.get(2)!.at - deaths.get(1)!} ms from exit to the new process`);
    expect(second.attempt).toBe(1);
    expect(h.runs('rt/once')).toHaveLength(2);
  });
});

describe('restart from a micro-pass', () => {
  it('the exit its waiter reports settles that run and submits the next at once, outside any pass', async () => {
    h = new EngineHarness({ intervalMs: 60_000 });
    let submittedByPasses = 0;
    h.engine.bus.on('pass', (p) => (submittedByPasses += p.submitted));
    const file = join(h.dir, 'stamps');
    h.define('rt/micro', { realtime: true, command: FIX('lives.sh'), args: [file, '0.3'] });
    const first = await h.waitRun('rt/micro', (r) => r.status === 'RUNNING' || r.status === 'EXITED', 15_000, 'the first instance');
    await h.waitRun('rt/micro', (r) => r.id !== first.id && (r.status === 'STARTING' || r.status === 'RUNNING'), 10_000, 'the second instance');
    expect(h.run(first.id)).toMatchObject({ status: 'EXITED', exitCode: 1 });
    // Only the first start came from a pass; the replacement came from the micro-pass.
    expect(submittedByPasses).toBe(1);
    expect(h.runs('rt/micro')).toHaveLength(2);
  });
});

describe('heartbeat silence', () => {
  it('keeps a beating routine past its grace, restarts it once its heartbeat goes silent', async () => {
    h = new EngineHarness({ intervalMs: 100 });
    // Beats every 0.3 s for ~3 s (well past grace 1 s + interval 1 s), then silent.
    h.define('rt/beats', { realtime: true, command: FIX('beats.sh'), args: ['10', '0.3'], heartbeat: '1s', grace: '1s' });
    const first = await h.waitRun('rt/beats', (r) => r.status === 'RUNNING', 15_000, 'RUNNING');
    const beats = () => lines(join(first.runDir!, 'beats'));

    // While it beats it is left alone, even well past the grace period.
    await waitFor(() => beats().length >= 8, 20_000, 'eight heartbeats');
    const during = h.run(first.id);
    expect(during.status).toBe('RUNNING');
    expect(during.reason).toBeNull();
    expect(during.heartbeatAt).not.toBeNull();
    expect(Date.now() - during.startedAt!).toBeGreaterThan(2000);

    // Silent: stopped with the reason, and a new instance started.
    const second = await h.waitRun('rt/beats', (r) => r.id !== first.id && (r.status === 'RUNNING' || r.status === 'STARTING'), 15_000, 'a new instance after the silence');
    const silenced = h.run(first.id);
    expect(silenced.status).toBe('EXITED');
    expect(silenced.reason).toMatch(/^heartbeat silent for \d+s \(interval 1s\)/);
    const lastBeat = epochMs(beats().at(-1)!.split(' ')[1]!);
    // Not before the silence was longer than the interval.
    expect(silenced.endedAt! - lastBeat).toBeGreaterThanOrEqual(1000);
    expect(h.eventsOf('run:silent').map((e) => e.runId)).toContain(first.id);
    // The silent process (and its session) was stopped.
    const rec = pidRecord(first.runDir!)!;
    await waitFor(() => sessionAlive(rec.pid).length === 0, 10_000, 'the silent session to be gone');
    expect(second.id).not.toBe(first.id);
  });

  it('a routine that never beats is restarted once its grace and interval have passed, not before', async () => {
    h = new EngineHarness({ intervalMs: 100 });
    h.define('rt/mute', { realtime: true, command: FIX('beats.sh'), args: ['0'], heartbeat: '1s', grace: '1s' });
    const first = await h.waitRun('rt/mute', (r) => r.status === 'RUNNING', 15_000, 'RUNNING');
    await h.waitRun('rt/mute', (r) => r.id !== first.id, 15_000, 'a restart');
    const stopped = h.run(first.id);
    expect(stopped.reason).toMatch(/^heartbeat silent/);
    // Stopped only once both the grace and the interval had passed since the start.
    expect(stopped.endedAt! - stopped.startedAt!).toBeGreaterThanOrEqual(1000);
  });
});

describe('quick deaths', () => {
  it(`backs off 0, 1 s, 2 s, 4 s after quick deaths; the ${CRASH_LOOP}th is a crash loop: ERROR until restarted by hand`, async () => {
    h = new EngineHarness({ intervalMs: 100 });
    const file = join(h.dir, 'stamps');
    // Five instances die after 0.1 s each; the sixth (started by hand) lives.
    h.define('rt/crashy', { realtime: true, command: FIX('lives.sh'), args: [file, '0.1', '0.1', '0.1', '0.1', '0.1'] });
    const errored = await h.waitRun('rt/crashy', (r) => r.status === 'ERROR', 30_000, 'the crash loop to end in ERROR');

    const runs = h.runs('rt/crashy');
    expect(runs.map((r) => r.status)).toEqual(['EXITED', 'EXITED', 'EXITED', 'EXITED', 'ERROR']);
    for (const r of runs) expect(r).toMatchObject({ exitCode: 1, signal: null });
    expect(errored.reason).toBe(`crash loop: ${CRASH_LOOP} quick deaths in a row, last: exit 1`);
    expect(h.eventsOf('routine:crash-loop')).toHaveLength(1);
    // Each restart waited for its backoff after the death before (lower bounds only).
    const waits = [0, 1000, 2000, 4000];
    for (let i = 1; i < runs.length; i++) {
      const gap = runs[i]!.createdAt - runs[i - 1]!.endedAt!;
      expect(gap, `restart ${i}`).toBeGreaterThanOrEqual(waits[i - 1]! - 20);
    }
    // The first restart did not wait for a backoff.
    expect(runs[1]!.createdAt - runs[0]!.endedAt!).toBeLessThan(1000);
    const { starts } = stamps(file);
    expect(starts.size).toBe(CRASH_LOOP);

    // No more restarts: passes go by, nothing starts.
    await h.morePasses(10);
    expect(h.runs('rt/crashy')).toHaveLength(CRASH_LOOP);
    expect(stamps(file).starts.size).toBe(CRASH_LOOP);

    // By hand: a new instance, and the streak starts over.
    const { started } = await h.engine.restart(`tester@host:rt/crashy`);
    expect(started.manual).toBe(true);
    const sixth = await h.waitRun('rt/crashy', (r) => r.id === started.id && r.status === 'RUNNING', 15_000, 'the instance started by hand');
    await waitFor(() => stamps(file).starts.has(6), 5000, 'the sixth process');
    expect(alive(stamps(file).starts.get(6)!.pid)).toBe(true);
    expect(sixth.status).toBe('RUNNING');
  }, 60_000);
});
