// `tend daemon status --json` of a live, beating daemon takes its counts from daemon.state.json,
// which the daemon recounts when the database changed: no SQLite is loaded, no database opened,
// and the counts still follow what the daemon and other commands did.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { childEnv, scratch, TEND, tendOk } from '../helpers/cli.js';
import { Daemon, readState } from '../helpers/daemon.js';
import { useDaemonBox } from '../helpers/daemon-box.js';
import { fixture } from '../helpers/local-job.js';
import { waitFor } from '../helpers/wait.js';

let box: ReturnType<typeof scratch>;
useDaemonBox(() => box);

function statusWithModules(dir: string): { code: number | null; s: Record<string, any>; modules: string[] } {
  // The CLI bundle is CommonJS: what it loads is required (list-required.cjs), an ES module imported.
  const r = spawnSync(process.execPath, ['--import', fixture('list-modules.mjs'), '-r', fixture('list-required.cjs'), TEND, 'daemon', 'status', '--json'], { env: childEnv(dir), encoding: 'utf8' });
  const modules = r.stderr
    .split('\n')
    .filter((l) => l.startsWith('module ') || l.startsWith('required '))
    .map((l) => l.slice(l.indexOf(' ') + 1));
  return { code: r.status, s: JSON.parse(r.stdout) as Record<string, any>, modules };
}
const sqlite = (modules: string[]) => modules.filter((m) => m.includes('/node_modules/better-sqlite3/') || /\/engine\/store\/(store|db|sqlite-binding)\.js$/.test(m));

describe('daemon status --json of a live daemon', () => {
  it('reads the counts the daemon saved, opening no database, and they follow the database', async () => {
    box = scratch('tend-status-file-');
    const dir = box.dir;
    const d = await new Daemon(dir, { TEND_DAEMON_INTERVAL_MS: '100' }).ready();
    tendOk(dir, ['job', 'post', '--json', '--', 'true']);
    await waitFor(() => statusWithModules(dir).s.jobs.COMPLETED === 1, 15_000, 'the job to complete');
    // A change the daemon's pass makes nothing of (a routine due in 2099) is counted too.
    tendOk(dir, ['routine', 'add', 'later', '--at', '2099-01-01T00:00', '--tz', 'UTC', '--', 'true']);
    await waitFor(() => statusWithModules(dir).s.nextDue?.at === '2099-01-01T00:00:00.000Z', 15_000, 'the new routine to be next due');
    const { code, s, modules } = statusWithModules(dir);
    expect(code).toBe(0);
    expect(s).toMatchObject({ healthy: true, owner: { pid: d.pid, alive: true }, jobs: { COMPLETED: 1 }, inFlight: 0, nextDue: { routineId: expect.stringMatching(/:later$/) } });
    expect(readState(dir)!.counts).toMatchObject({ jobs: { COMPLETED: 1 } });
    expect(sqlite(modules)).toEqual([]);
  });

  it('without a live owner it counts in the database itself', async () => {
    box = scratch('tend-status-file-');
    const dir = box.dir;
    const d = await new Daemon(dir, { TEND_DAEMON_INTERVAL_MS: '100' }).ready();
    await d.stop();
    tendOk(dir, ['job', 'post', '--json', '--', 'true']); // no daemon: the job waits, NEW
    const { code, s, modules } = statusWithModules(dir);
    expect(code).toBe(1);
    expect(s.healthy).toBe(false);
    expect(Object.values(s.jobs as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(1);
    expect(sqlite(modules).length).toBeGreaterThan(0);
  });
});
