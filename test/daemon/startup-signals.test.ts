// The startup window: `tend` commands nudge the owner named in daemon.pid with SIGUSR2 from the
// moment that file exists, and a service manager may stop it at any time. A daemon answers all
// four signals from before it claims the data dir: nudges during startup do not kill it, and a
// TERM (or INT, HUP) during startup makes it release what it claimed and exit 0.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { Store } from '../../main/engine/store/store.js';
import { waitFor, within } from '../helpers/wait.js';
import { scratch, tendAsync } from '../helpers/cli.js';
import { Daemon, readPidFile } from '../helpers/daemon.js';
import { useDaemonBox } from '../helpers/daemon-box.js';

let box: ReturnType<typeof scratch>;
useDaemonBox(() => box);

/** A history large enough that opening and checking the store takes a while (a long window). */
function history(dir: string): void {
  const store = Store.open(join(dir, 'tend.db'));
  const text = 'x'.repeat(400);
  store.tx(() => {
    for (let i = 0; i < 60_000; i++) store.events.append({ type: 'job:posted', jobId: i, message: text }, i);
  });
  store.close();
}

/** Resolves once daemon.pid names `pid` (what a `tend` command looks for before it signals). */
async function claimed(dir: string, pid: number): Promise<void> {
  await waitFor(() => readPidFile(dir)?.pid === pid, 30_000, `daemon ${pid} to claim ${dir}`, 1);
}

it('a storm of nudges from the moment it claims the data dir does not kill it; it passes and serves', async () => {
  box = scratch('tend-startsig-');
  history(box.dir);
  const d = new Daemon(box.dir, { TEND_DAEMON_INTERVAL_MS: '100' });
  await claimed(box.dir, d.pid);
  let sent = 0;
  let storming = true;
  const storm = (async () => {
    while (storming && d.exit === null) {
      try {
        process.kill(d.pid, 'SIGUSR2');
        sent++;
      } catch {
        return;
      }
      await new Promise((r) => setImmediate(r));
    }
  })();
  // And real `tend` commands, which nudge after writing.
  const posts = Promise.all([0, 1, 2].map(() => tendAsync(box.dir, ['job', 'post', '--', 'true'])));
  await d.ready(60_000);
  storming = false;
  await storm;
  for (const p of await posts) expect(p.code, p.stderr).toBe(0);
  expect(sent).toBeGreaterThan(0);
  expect(d.exit).toBeNull();
  await waitFor(async () => (await tendAsync(box.dir, ['job', 'list', '--status', 'completed', '--json'])).stdout.match(/"id"/g)?.length === 3, 30_000, 'the posted jobs to run');
}, 120_000);

for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  it(`${sig} during startup: it exits 0 and releases the data dir`, async () => {
    box = scratch('tend-startsig-');
    history(box.dir);
    const d = new Daemon(box.dir, { TEND_DAEMON_INTERVAL_MS: '100' });
    await claimed(box.dir, d.pid);
    process.kill(d.pid, sig);
    const exit = await within(d.exited, 30_000, `daemon ${d.pid} to exit on ${sig}`);
    expect(exit, d.stderr).toMatchObject({ code: 0, signal: null });
    expect(d.stderr).toMatch(new RegExp(`stopping(: | on )${sig}`));
    expect(existsSync(join(box.dir, 'daemon.pid'))).toBe(false);
    expect(existsSync(join(box.dir, 'daemon.pid.lock'))).toBe(false);
    // Free for the next owner at once.
    const next = await new Daemon(box.dir, { TEND_DAEMON_INTERVAL_MS: '100' }).ready(60_000);
    expect(readPidFile(box.dir)?.pid).toBe(next.pid);
  }, 120_000);
}
