// A cluster scheduler being down is not a statement about anybody's job: with slurmctld stopped
// the Slurm stage pauses (health gate), polls fail without settling anything, nothing fails, and
// everything resumes when the controller is back. Holds the cluster lock exclusively: the other
// Slurm test files wait while the controller is down.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { COMPUTER, EngineHarness, lines } from '../helpers/engine-harness.js';
import { cancelJobsUnder, ensureCluster, FIXTURES, GATED, HAVE_SLURM, lockCluster, SKIP_MESSAGE } from './helpers.js';

if (!HAVE_SLURM) it.skip(SKIP_MESSAGE, () => undefined);

const controllerUp = () => /is UP/.test(spawnSync('scontrol', ['ping'], { encoding: 'utf8' }).stdout);

describe.runIf(HAVE_SLURM)('the Slurm controller stopped and started again', () => {
  let unlock: () => Promise<void>;
  let h: EngineHarness;

  beforeAll(async () => {
    unlock = await lockCluster('exclusive');
    ensureCluster();
    h = new EngineHarness({ intervalMs: 200, maxParallel: 20 });
  }, 660_000);

  afterAll(async () => {
    // Whatever happened, the cluster is left up for the next test file.
    if (!controllerUp()) ensureCluster();
    if (h) cancelJobsUnder(h.dir);
    await h?.close();
    await unlock?.();
  }, 120_000);

  it('pauses the stage, fails nothing, and resumes when the controller is back', async () => {
    const release = join(h.dir, 'release');
    const j1 = h.post({ command: GATED, args: [join(h.dir, 'one'), release], backend: 'slurm', computer: COMPUTER });
    await waitFor(() => h.job(j1.id).status === 'RUNNING' && lines(join(h.dir, 'one.start')).length === 1, 60_000, 'job 1 RUNNING in Slurm', 100);

    const stop = spawnSync('scontrol', ['shutdown', 'slurmctld'], { encoding: 'utf8' });
    expect(stop.status, stop.stderr).toBe(0);
    await waitFor(() => !controllerUp() && spawnSync('pgrep', ['-x', 'slurmctld']).status !== 0, 30_000, 'slurmctld to be down');

    // New work for the stage while the controller is down, and the running job ends meanwhile.
    const j2 = h.post({ command: join(FIXTURES, 'exit0.sh'), backend: 'slurm', computer: COMPUTER });
    await waitFor(() => h.eventsOf('backend:paused').some((e) => /backend slurm paused: the Slurm controller does not answer/.test(e.message)), 30_000, 'the slurm stage to pause');
    writeFileSync(release, '');
    await waitFor(() => lines(join(h.dir, 'one')).length === 1, 30_000, 'job 1 to end on the node');
    await h.morePasses(10, 60_000);
    expect(h.job(j1.id).status).toBe('RUNNING'); // ended, but not settled without the controller's word
    expect(h.job(j2.id).status).toBe('PENDING'); // waiting, not failed
    expect(h.eventsOf('backend:poll-failed').length).toBeGreaterThan(0);
    expect(h.events.filter((e) => e.level === 'error').map((e) => `${e.type}: ${e.message}`)).toEqual([]);
    expect(h.eventsOf('backend:paused')).toHaveLength(1); // reported once per transition, not once per pass

    ensureCluster(); // scripts/slurm/up.sh starts what is missing
    await waitFor(() => h.job(j1.id).status === 'COMPLETED' && h.job(j2.id).status === 'COMPLETED', 90_000, 'both jobs to complete', 200);
    expect(h.eventsOf('backend:resumed').map((e) => e.message)).toEqual(['backend slurm healthy again']);
    expect(h.job(j2.id).reason).toBeNull();
  }, 240_000);
});
