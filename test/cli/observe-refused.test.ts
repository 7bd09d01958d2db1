// `tend routine run|restart` on an observe-only schedule is refused with the reason, as the UI
// disables it, instead of queueing a run that would fire late on `activate`.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { cliSandbox } from './run-cli.js';

let cli: ReturnType<typeof cliSandbox>;
beforeEach(() => {
  cli = cliSandbox();
});
afterEach(() => cli.remove());

it.each(['run', 'restart'])('routine %s on an observe-only schedule is refused and queues nothing', (verb) => {
  cli.ok('routine', 'add', 'me@box:watched', '--schedule', 'obs', '--every', '1h', '--', 'true');
  cli.ok('schedule', 'observe', 'obs');
  const r = cli.tend('routine', verb, 'me@box:watched', '--no-wait');
  expect(r.code).toBe(1);
  expect(r.stderr).toBe(`tend: cannot ${verb} me@box:watched: its schedule obs is observe-only, so Tend starts nothing there (tend schedule activate obs first)\n`);
  expect(cli.ok<{ history: unknown[] }>('routine', 'show', 'me@box:watched', '--json').history).toEqual([]);
  cli.ok('schedule', 'activate', 'obs');
  expect(cli.tend('routine', verb, 'me@box:watched', '--no-wait').code).toBe(0);
});
