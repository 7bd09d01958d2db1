// What a run leaves and what it must leave: a flooding routine's logs stay within its cap and keep
// the newest output (and `tend logs` shows the end); a run that exits 0 without its promised
// outputs is ERROR naming the missing path; a pinned revision that does not match refuses the
// launch (LAUNCH_REFUSED event, ERROR) and nothing is launched.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { logBytesOnDisk, tailLog } from '../../worker/local/index.js';
import { cliWith } from '../helpers/cli.js';
import { NO_API } from '../helpers/daemon.js';
import { EngineHarness, FIX, SHARED_FIX, id, lines } from '../helpers/engine-harness.js';

const { tend } = cliWith(NO_API);

let h: EngineHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

const batch = { at: '2099-01-01T00:00', retry: 'none' };

async function runToEnd(path: string) {
  const run = h!.engine.runNow(id(path));
  return h!.waitRun(path, (r) => r.id === run.id && ['COMPLETED', 'ERROR', 'CANCELLED'].includes(r.status), 30_000, `the run of ${path} to end`);
}

describe('output cap', () => {
  it('a flooding routine with log_cap 64KiB keeps the newest output, bounded on disk; tend logs shows the end', async () => {
    h = new EngineHarness();
    // 100,000 lines of 14 bytes: ~1.4 MB through a 64 KiB cap.
    h.define('out/flood', { ...batch, command: SHARED_FIX('flood.sh'), args: ['100000'], log_cap: '64KiB' });
    const run = await runToEnd('out/flood');
    expect(run).toMatchObject({ status: 'COMPLETED', exitCode: 0 });
    const dir = run.runDir!;
    expect(logBytesOnDisk(dir, 'stdout')).toBeLessThanOrEqual(64 * 1024);
    // At least half the cap of the newest output is kept, ending with the last lines.
    expect(logBytesOnDisk(dir, 'stdout')).toBeGreaterThanOrEqual(32 * 1024);
    const tail = tailLog(dir, 'stdout', 64 * 1024);
    expect(tail.endsWith('line 00099999\nline 00100000\nEND\n')).toBe(true);
    const kept = tail.split('\n').filter((l) => l.startsWith('line '));
    // What is kept is contiguous up to the end (the oldest output was dropped, nothing in between).
    const nums = kept.slice(1).map((l) => Number(l.slice(5)));
    expect(nums.at(-1)).toBe(100000);
    nums.forEach((n, i) => i > 0 && expect(n).toBe(nums[i - 1]! + 1));

    const out = tend(h.dir, ['logs', id('out/flood'), '--tail', '3']);
    expect(out.code).toBe(0);
    expect(out.stdout).toBe('line 00099999\nline 00100000\nEND\n');
    const byRun = tend(h.dir, ['logs', run.id, '--tail', '1']);
    expect(byRun.stdout).toBe('END\n');
  });
});

describe('promised outputs', () => {
  it('exit 0 without a promised output is ERROR "promised output missing: <path>"; with it, COMPLETED', async () => {
    h = new EngineHarness();
    const work = join(h.dir, 'work');
    mkdirSync(work);
    h.define('out/promises', { ...batch, cwd: work, command: SHARED_FIX('write-output.sh'), args: ['report.csv'], outputs: ['report.csv', 'charts/*.png'] });
    const missing = await runToEnd('out/promises');
    expect(missing).toMatchObject({ status: 'ERROR', exitCode: 0, reason: 'promised output missing: charts/*.png' });
    expect(h.eventsOf('run:failed').map((e) => e.message)).toContain('failed: promised output missing: charts/*.png');

    mkdirSync(join(work, 'charts'));
    writeFileSync(join(work, 'charts', 'a.png'), 'png');
    const kept = await runToEnd('out/promises');
    expect(kept).toMatchObject({ status: 'COMPLETED', exitCode: 0, reason: null });
  });
});

describe('revision pinning', () => {
  function git(cwd: string, ...args: string[]): string {
    return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } }).trim();
  }

  it('a pinned revision that does not match (or a dirty tree) is LAUNCH_REFUSED and ERROR, and nothing is launched', async () => {
    h = new EngineHarness();
    const repo = join(h.dir, 'repo');
    mkdirSync(repo);
    git(repo, 'init', '-q');
    writeFileSync(join(repo, 'code.sh'), 'v1\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'one');
    const one = git(repo, 'rev-parse', 'HEAD');
    writeFileSync(join(repo, 'code.sh'), 'v2\n');
    git(repo, 'commit', '-q', '-am', 'two');
    const marker = join(h.dir, 'marker');
    const input = { ...batch, cwd: repo, command: FIX('gated.sh'), args: [marker, '/', '0'] };

    // Pinned to the first commit while the tree is at the second.
    h.define('out/pinned', { ...input, revision: one });
    const refused = await runToEnd('out/pinned');
    expect(refused.status).toBe('ERROR');
    expect(refused.reason).toMatch(/^LAUNCH_REFUSED: HEAD is [0-9a-f]{12} but the routine pins /);
    const events = h.eventsOf('run:refused');
    expect(events).toHaveLength(1);
    expect(events[0]!.message).toBe(refused.reason);
    // Never launched: no process ran, no job directory holds a job.
    expect(lines(`${marker}.start`)).toEqual([]);
    expect(refused.runDir === null || !existsSync(refused.runDir)).toBe(true);

    // At the pinned commit but with a change in the tree: refused too.
    git(repo, 'checkout', '-q', one);
    writeFileSync(join(repo, 'code.sh'), 'local edit\n');
    const dirty = await runToEnd('out/pinned');
    expect(dirty.reason).toMatch(/^LAUNCH_REFUSED: working tree .* is not clean/);
    expect(lines(`${marker}.start`)).toEqual([]);

    // Clean and at the pinned commit: launched.
    git(repo, 'checkout', '-q', '--', 'code.sh');
    const ran = await runToEnd('out/pinned');
    expect(ran).toMatchObject({ status: 'COMPLETED', exitCode: 0 });
    expect(lines(`${marker}.start`)).toHaveLength(1);
  });
});
