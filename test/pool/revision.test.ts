// A routine pinned to a source revision runs on its worker only where that revision is checked out
// clean; otherwise the worker refuses to launch it and says why (same rule as the local backend).
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { assertBuilt, killTracked, lines, Pool, scratch, waitFor } from './harness.js';

let box: ReturnType<typeof scratch>;
let pool: Pool | null = null;

beforeAll(() => assertBuilt());
afterEach(async () => {
  await pool?.stopAll();
  pool = null;
  await killTracked();
  box?.remove();
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' }).trim();
}

it('launches a pinned routine only from a clean checkout of its revision, and reports the refusal otherwise', async () => {
  box = scratch('tend-pool-rev-');
  const src = join(box.dir, 'src');
  mkdirSync(src);
  git(src, 'init', '-q');
  writeFileSync(join(src, 'job.sh'), 'echo "ran $TEND_RUN_ID" >> "$1"\n');
  git(src, 'add', 'job.sh');
  git(src, 'commit', '-q', '-m', 'one');
  const sha = git(src, 'rev-parse', 'HEAD');
  const marker = join(box.dir, 'marker');

  pool = await Pool.start(box.dir);
  const w = pool.worker('u@w1');
  const since = Date.now();
  w.start();
  await pool.seen(w, since);
  pool.tendOk('routine', 'add', 'u@w1:pinned', '--at', '2099-01-01T00:00', '--tz', 'UTC', '--retry', 'none', '--cwd', src, '--revision', sha, '--', 'sh', 'job.sh', marker);

  pool.tendOk('routine', 'run', 'u@w1:pinned', '--no-wait');
  await waitFor(() => pool!.db.runs('u@w1:pinned')[0]?.status === 'COMPLETED', 20_000, 'the pinned run to complete');
  expect(lines(marker).length).toBe(1);

  // An inconsistent installation: a file that is not in the pinned commit.
  writeFileSync(join(src, 'stray.txt'), 'not committed\n');
  pool.tendOk('routine', 'run', 'u@w1:pinned', '--no-wait');
  const refused = await waitFor(() => pool!.db.runs('u@w1:pinned').find((r) => r.status === 'ERROR'), 20_000, 'the second run to be refused');
  expect(refused.reason).toMatch(/LAUNCH_REFUSED/);
  expect(refused.reason).toMatch(/stray\.txt|changes|untracked/);
  expect(lines(marker).length).toBe(1);
  // Refused before anything ran: no job directory for it on the worker.
  expect(w.runDirs().has(refused.id)).toBe(false);
});
