// `tend daemon run` reads its settings from the environment once, at start: a refused value stops
// it before it claims the data dir, naming every bad knob; a bad timeout is named and its default
// used, and the daemon runs on.
import { existsSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { paths } from '../../main/engine/datadir.js';
import { scratch } from '../helpers/cli.js';
import { Daemon } from '../helpers/daemon.js';
import { useDaemonBox } from '../helpers/daemon-box.js';

let box: ReturnType<typeof scratch>;
useDaemonBox(() => box);

it('a bad pass interval is a usage error (exit 2), before anything is claimed', async () => {
  box = scratch('tend-settings-interval-');
  const daemon = new Daemon(box.dir, { TEND_DAEMON_INTERVAL_MS: '5' });
  expect((await daemon.exited).code).toBe(2);
  expect(daemon.stderr).toContain('tend daemon: TEND_DAEMON_INTERVAL_MS must be a number of milliseconds between 10 and 3600000, got "5"');
  expect(existsSync(paths(box.dir).pid)).toBe(false);
});

it('bad limits and a bad API port are all named in one refusal (exit 1)', async () => {
  box = scratch('tend-settings-refused-');
  const daemon = new Daemon(box.dir, { TEND_MAX_PARALLEL: '0', TEND_BATCH_SLOTS: 'many', TEND_API_PORT: 'http' });
  expect((await daemon.exited).code).toBe(1);
  expect(daemon.stderr).toContain('tend daemon: TEND_MAX_PARALLEL must be an integer from 1 to 10000, got "0"');
  expect(daemon.stderr).toContain('tend daemon: TEND_BATCH_SLOTS must be an integer from 0 to 10000, got "many"');
  expect(daemon.stderr).toContain('tend daemon: TEND_API_PORT must be a port from 0 to 65535, got "http"');
  expect(existsSync(paths(box.dir).pid)).toBe(false);
});

it('a bad timeout is named at start and its default used; the daemon runs', async () => {
  box = scratch('tend-settings-warn-');
  const daemon = await new Daemon(box.dir, { TEND_DAEMON_INTERVAL_MS: '100', TEND_COMMAND_TTL_MS: 'soon', TEND_WEBHOOK_POLL_MS: '0' }).ready();
  expect(daemon.stderr).toContain('tend daemon: TEND_COMMAND_TTL_MS must be milliseconds from 100 to 86400000, got "soon": using 60000');
  expect(daemon.stderr).toContain('tend daemon: TEND_WEBHOOK_POLL_MS must be an integer from 10 to 60000, got "0": using 1000');
  // Named in daemon.log too, where a daemon started by `ensure` or a service is read.
  expect(readFileSync(paths(box.dir).log, 'utf8')).toContain('TEND_COMMAND_TTL_MS must be milliseconds');
});
