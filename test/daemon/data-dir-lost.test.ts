// A daemon whose data dir is deleted or replaced under it notices within a pass or two, says why,
// and exits (non-zero, so a service manager starts a fresh one) instead of running on against
// unlinked files.
import { mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { within } from '../helpers/wait.js';
import { assertBuilt, killTracked, scratch } from '../helpers/cli.js';
import { Daemon } from '../helpers/daemon.js';

let box: ReturnType<typeof scratch>;
beforeAll(() => assertBuilt());
afterEach(async () => {
  await killTracked();
  box.remove();
});

it('the data dir deleted: the daemon logs why and exits 1', async () => {
  box = scratch('tend-lost-');
  const dir = `${box.dir}/data`;
  const d = await new Daemon(dir, { TEND_DAEMON_INTERVAL_MS: '100' }).ready();
  rmSync(dir, { recursive: true, force: true });
  const exit = await within(d.exited, 20_000, 'the daemon to notice and exit');
  expect(exit.code, d.stderr).toBe(1);
  expect(d.stderr).toContain(`the data dir ${dir} was deleted`);
  expect(d.stderr).toContain('stopping rather than running on against unlinked files');
}, 60_000);

it('the data dir replaced by another directory: the daemon logs why and exits 1, leaving the new one alone', async () => {
  box = scratch('tend-lost-');
  const dir = `${box.dir}/data`;
  const d = await new Daemon(dir, { TEND_DAEMON_INTERVAL_MS: '100' }).ready();
  renameSync(dir, `${box.dir}/old`);
  mkdirSync(dir);
  const exit = await within(d.exited, 20_000, 'the daemon to notice and exit');
  expect(exit.code, d.stderr).toBe(1);
  expect(d.stderr).toContain(`the data dir ${dir} was replaced by another directory`);
  expect(readdirSync(dir).filter((f) => f !== 'daemon.log')).toEqual([]);
}, 60_000);
