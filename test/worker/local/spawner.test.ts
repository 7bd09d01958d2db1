// The spawn helper dying between launches: every launch sent to it meanwhile is refused as
// HelperGone (the caller then spawns the wrapper itself), and none of the failed writes reaches
// the process as an unheard 'error' — which would crash a daemon.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HelperGone, launchViaHelper, type WrapperLaunch } from '../../../worker/local/spawner.js';
import { waitFor } from '../../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'tend-spawner-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const launch = (): WrapperLaunch => ({ file: '/bin/true', args: [], cwd: dir, env: { PATH: process.env['PATH'] }, log: join(dir, 'wrapper.log') });

/** Our child running the helper program, and its state letter from /proc (Z: dead, not reaped). */
function helper(): { pid: number; state: string } | null {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(ppid) === process.pid && readFileSync(`/proc/${name}/cmdline`, 'utf8').includes("t: 'spawned'")) return { pid: Number(name), state: state! };
    } catch {
      /* gone */
    }
  }
  return null;
}

describe.skipIf(process.platform !== 'linux')('the spawn helper', () => {
  it('launches sent to a helper that has just died are refused as HelperGone, with no unheard error', async () => {
    const exited: number[] = [];
    await expect(launchViaHelper(launch(), () => exited.push(1))).resolves.toBeGreaterThan(0);
    const h = helper();
    expect(h).not.toBeNull();
    process.kill(h!.pid, 'SIGKILL');
    // Without yielding (so Node has not reaped it or heard its exit): wait for the kernel to have
    // closed its end of the channel. Then three launches write into a dead channel.
    const deadline = Date.now() + 5000;
    for (let h2 = helper(); h2 && h2.state !== 'Z'; h2 = helper()) if (Date.now() > deadline) throw new Error(`the helper never died: ${JSON.stringify(h2)}`);
    const sent = [launchViaHelper(launch(), () => undefined), launchViaHelper(launch(), () => undefined), launchViaHelper(launch(), () => undefined)];
    const settled = await Promise.allSettled(sent.map((p) => p!));
    for (const s of settled) {
      expect(s.status).toBe('rejected');
      expect((s as PromiseRejectedResult).reason).toBeInstanceOf(HelperGone);
    }
    // The next launch starts a new helper and succeeds.
    await expect(launchViaHelper(launch(), () => undefined)).resolves.toBeGreaterThan(0);
    await waitFor(() => helper() !== null, 5000, 'the new helper');
  });
});
