// Passes while jobs flow, through a real Engine (local backend, batch waiters, real processes),
// its timed pass a minute away so that every pass is one asked for: a launch recorded is looked
// at by a pass soon (its job shown RUNNING) without a pass of its own while exits keep coming,
// and exits heard together are settled together (issue 14: a pass per exit and one per recorded
// launch made about 1.2 passes a job, each settling or launching one).
import { afterEach, expect, it } from 'vitest';
import { EngineHarness } from '../helpers/engine-harness.js';
import { waitFor } from '../helpers/wait.js';

let h: EngineHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

it('a job that runs on is shown RUNNING by a pass soon after its launch is recorded, with no timed pass', async () => {
  h = new EngineHarness({ intervalMs: 60_000 });
  const job = h.post({ command: '/bin/sleep', args: ['30'], name: 'runs on' });
  await waitFor(() => h!.store.ledger.get('job', String(job.id)), 15_000, 'the launch to be recorded');
  await waitFor(() => h!.job(job.id).status === 'RUNNING', 15_000, 'the job shown RUNNING');
});

it('drains 60 no-op jobs in fewer passes than jobs', async () => {
  h = new EngineHarness({ intervalMs: 60_000, maxParallel: 8, start: false });
  const n = 60;
  for (let i = 0; i < n; i++) h.post({ command: '/bin/true', name: `noop ${i}` });
  h.engine.start();
  await waitFor(() => h!.store.jobs.counts().COMPLETED === n, 60_000, `${n} jobs COMPLETED`);
  // A pass for every exit and every recorded launch was about 1.2 a job (passes overlapping absorbed some).
  expect(h.passes).toBeLessThan(n * 0.8);
});
