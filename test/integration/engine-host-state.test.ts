// daemon.state.json of an idle owner: a heartbeat alone is written every third period, not after
// every pass (the rewrite, a rename, was most of an idle daemon's CPU); anything else the file
// says (a pass that did something, the status counts) is written within a period.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startEngineHost, type EngineHost } from '../../main/engine/host/engine-host.js';
import { postJob } from '../../main/engine/ops/jobs.js';
import { settings } from '../../main/engine/settings.js';
import { waitFor } from '../helpers/wait.js';

const COMPUTER = 'tester@host';
let dir: string | null = null;
let host: EngineHost | null = null;

afterEach(async () => {
  await host?.stop();
  host = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

const state = (d: string) => JSON.parse(readFileSync(join(d, 'daemon.state.json'), 'utf8')) as { lastHeartbeat: string; lastPass: { submitted: number } | null; counts?: { jobs: Record<string, number> } };

describe('the state file of an idle owner', () => {
  it('carries a heartbeat alone every third period, and a change within one', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tend-host-state-'));
    const d = dir;
    const h = (host = await startEngineHost({ dataDir: d, intervalMs: 50, kind: 'daemon', api: false, rendererDir: null, settings: settings({ keepDays: null }), log: () => undefined, options: { computer: COMPUTER } }));
    await waitFor(() => state(d).lastPass !== null, 10_000, 'a first pass saved');
    // Each pass, after the host's own listener: which heartbeat the file holds now.
    const beats: string[] = [];
    const seen = () => beats.push(state(d).lastHeartbeat);
    h.engine.bus.on('pass', seen);
    await waitFor(() => beats.length >= 40, 20_000, '40 idle passes');
    h.engine.bus.off('pass', seen);
    // Every pass wrote it before (40 heartbeats); now about one in three.
    expect(new Set(beats).size).toBeLessThanOrEqual(20);
    expect(new Set(beats).size).toBeGreaterThanOrEqual(2);

    postJob(h.engine.store, { command: 'true', computer: COMPUTER }, Date.now());
    h.engine.nudge();
    await waitFor(() => (state(d).lastPass?.submitted ?? 0) > 0 || (state(d).counts?.jobs['COMPLETED'] ?? 0) > 0, 10_000, 'the pass that launched the job, or its end, saved');
    await waitFor(() => state(d).counts?.jobs['COMPLETED'] === 1, 10_000, 'the job counted COMPLETED in the state file');
  });
});
