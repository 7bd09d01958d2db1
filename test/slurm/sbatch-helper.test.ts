// The bash helpers that run sbatch for the backend, against a stand-in sbatch (no cluster): every
// argument and variable arrives byte for byte, nothing leaks from one request to the next,
// answers find their requests when several run at once, and a stuck or idle helper goes away.
import { spawnSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execRunner } from '../../worker/slurm/commands.js';
import { SbatchHelpers } from '../../worker/slurm/sbatch-helper.js';
import { waitFor } from '../helpers/wait.js';
import { scratch } from './helpers.js';

// Prints each argument as <length>:<value>; then X, GONE and the stdin it got; exits $EXIT.
const FAKE = `#!/bin/bash
for a in "$@"; do printf '%s:%s;' "\${#a}" "$a"; done
printf 'X=%s;GONE=%s;STDIN=%s' "\${X-unset}" "\${GONE-unset}" "$(cat)"
echo "note on stderr" >&2
[ -n "\${SLEEP-}" ] && sleep "$SLEEP"
exit "\${EXIT:-0}"
`;

let box: ReturnType<typeof scratch>;
let fake: string;
let helpers: SbatchHelpers | null = null;
beforeEach(() => {
  box = scratch('tend-sbatch-helper-');
  fake = join(box.dir, 'sbatch');
  writeFileSync(fake, FAKE);
  chmodSync(fake, 0o755);
});
afterEach(() => {
  helpers?.close();
  helpers = null;
  box.remove();
});

const base = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', GONE: 'here at start' };

describe('sbatch helpers', () => {
  it('pass arguments and variable values through unchanged (quotes, newlines, $(…), empty, unicode)', async () => {
    helpers = new SbatchHelpers({ file: fake, size: 1 });
    const args = ['--job-name=a b', "it's", '"double"', '$(touch /tmp/x) `id`', '', 'line1\nline2\n', 'ünïcødé ✓', '-', '--'];
    const r = await helpers.run(args, { ...base, X: 'multi\nline $HOME \'q\'' }, 10_000);
    expect(r.failure).toBeNull();
    expect(r.code).toBe(0);
    // Lengths in bytes: the helper runs in the C locale.
    expect(r.stdout).toBe(`${args.map((a) => `${Buffer.byteLength(a)}:${a};`).join('')}X=multi\nline $HOME 'q';GONE=here at start;STDIN=`);
    expect(r.stderr).toBe('note on stderr');
  });

  it('applies each request’s environment in isolation: set and unset relative to the helper’s own', async () => {
    helpers = new SbatchHelpers({ file: fake, size: 1 });
    const first = await helpers.run([], { ...base, X: 'one' }, 10_000);
    const second = await helpers.run([], { PATH: base.PATH }, 10_000); // no X, no GONE
    const third = await helpers.run([], { ...base }, 10_000);
    expect(first.stdout).toBe('X=one;GONE=here at start;STDIN=');
    expect(second.stdout).toBe('X=unset;GONE=unset;STDIN=');
    expect(third.stdout).toBe('X=unset;GONE=here at start;STDIN=');
  });

  it('reports the exit status and matches answers to requests when several run at once', async () => {
    helpers = new SbatchHelpers({ file: fake, size: 3 });
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => helpers!.run([`job${i}`], { ...base, X: String(i), EXIT: String(i % 4) }, 20_000)));
    results.forEach((r, i) => {
      expect(r.stdout.startsWith(`${`job${i}`.length}:job${i};X=${i};`), r.stdout).toBe(true);
      expect(r.code).toBe(i % 4);
    });
  });

  it('fails a request that misses its deadline, kills that helper, and serves the next one', async () => {
    helpers = new SbatchHelpers({ file: fake, size: 1 });
    const slow = await helpers.run(['slow'], { ...base, SLEEP: '30' }, 300);
    expect(slow).toMatchObject({ code: null, failure: 'sbatch did not finish within 300 ms' });
    const next = await helpers.run(['next'], { ...base }, 10_000);
    expect(next.code).toBe(0);
    expect(next.stdout.startsWith('4:next;')).toBe(true);
  });

  it('ends an idle helper by itself', async () => {
    helpers = new SbatchHelpers({ file: fake, size: 1, idleMs: 200 });
    await helpers.run([], { ...base }, 10_000);
    const pids = () => {
      const r = spawnSync('pgrep', ['-f', 'tend-sbatch-helper'], { encoding: 'utf8' });
      return r.stdout.split('\n').filter(Boolean).map(Number);
    };
    const mine = (helpers as unknown as { helpers: { child: { pid: number } }[] }).helpers.map((h) => h.child.pid);
    expect(mine).toHaveLength(1);
    await waitFor(() => !pids().includes(mine[0]!), 5000, 'the idle helper to exit');
  });

  it('is what execRunner uses for sbatch (and a missing sbatch is a failure, not a hang)', async () => {
    const runner = execRunner({ binDir: box.dir });
    const r = await runner.run('sbatch', ['--parsable', 'x'], { env: { ...base } });
    expect(r.stdout).toBe('10:--parsable;1:x;X=unset;GONE=here at start;STDIN=');
    const missing = execRunner({ binDir: join(box.dir, 'nowhere') });
    const m = await missing.run('sbatch', [], { env: { ...base } });
    expect(m.code).toBe(127);
    expect(m.stderr).toMatch(/No such file or directory/);
  });
});
