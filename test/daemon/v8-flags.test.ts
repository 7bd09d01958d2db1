// The daemon sets its own V8 flags (main/engine/daemon/v8-flags.ts), from inside `tend daemon
// run`, so however it is started it runs without the optimizing compiler, and its young
// generation stays at its first semi-space until the first pass is done; other commands keep V8's defaults.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { childEnv, FIXTURES, REPO, scratch, TEND } from '../helpers/cli.js';
import { Daemon } from '../helpers/daemon.js';
import { useDaemonBox } from '../helpers/daemon-box.js';

let box: ReturnType<typeof scratch>;
useDaemonBox(() => box);

const REPORT = ['--allow-natives-syntax', '-r', join(FIXTURES, 'report-v8.cjs')];

interface V8Report {
  optimized: boolean;
  /** The largest young generation in the first seconds (the fixture samples it). */
  startYoungMiB: number;
  /** The young generation after the fixture's garbage, at exit. */
  exitYoungMiB: number;
}

function v8Report(stderr: string): V8Report {
  const line = stderr.split('\n').find((l) => l.startsWith('v8 '));
  if (!line) throw new Error(`no v8 report in:\n${stderr}`);
  return JSON.parse(line.slice(3)) as V8Report;
}

describe('the daemon runs with its own V8 flags', () => {
  it('tend daemon run optimizes no function, starts in a 2 MiB young generation and lets it grow once started', async () => {
    box = scratch('tend-v8-daemon-');
    // With its API: the routes and their schemas are the bulk of start-up's garbage.
    const d = new Daemon(box.dir, {}, ['--quiet'], { nodeArgs: REPORT });
    await d.ready();
    await d.serving();
    await d.stop();
    const report = v8Report(d.stderr);
    expect(report.optimized).toBe(false);
    expect(report.startYoungMiB).toBeLessThanOrEqual(2);
    expect(report.exitYoungMiB).toBeGreaterThan(2);
  });

  it('another command keeps V8 defaults: it optimizes hot code and grows its young generation', () => {
    box = scratch('tend-v8-cli-');
    const r = spawnSync(process.execPath, [...REPORT, TEND, 'daemon', 'status', '--json'], { cwd: REPO, env: childEnv(box.dir), encoding: 'utf8' });
    const report = v8Report(r.stderr);
    expect(report.optimized).toBe(true);
    expect(report.exitYoungMiB).toBeGreaterThan(2);
  });
});
