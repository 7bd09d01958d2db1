// The shared daemon harness (./daemon.ts) against a real `tend daemon run`: what the tests that
// use it rely on.
import { describe, expect, it } from 'vitest';
import { alive, scratch } from './cli.js';
import { useDaemonBox } from './daemon-box.js';
import { Daemon, readApi } from './daemon.js';

let box: ReturnType<typeof scratch> | undefined;
useDaemonBox(() => box);

describe('the daemon harness', () => {
  it('ready() rejects as soon as the daemon exits, with its exit status and what it said', async () => {
    box = scratch('tend-harness-');
    const d = new Daemon(box.dir, { TEND_DAEMON_INTERVAL_MS: 'abc' });
    // A deadline far beyond the test's own: only the exit can end the wait in time.
    await expect(d.ready(600_000)).rejects.toThrow(/exited 2: .*TEND_DAEMON_INTERVAL_MS must be a number/s);
  });

  it('serving() gives the API of this daemon; stop() waits until it has exited', async () => {
    box = scratch('tend-harness-');
    const d = await new Daemon(box.dir, { TEND_API_PORT: '0' }).ready();
    const api = await d.serving();
    expect(api).toEqual(readApi(box.dir));
    expect(api.pid).toBe(d.pid);
    expect((await fetch(`${api.url}/health`)).ok).toBe(true);
    const exit = await d.stop();
    expect(exit.code).toBe(0);
    expect(alive(d.pid)).toBe(false);
  });
});
