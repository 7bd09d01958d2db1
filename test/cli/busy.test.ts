// A `tend` write that meets a database another process keeps locked: it waits and tries again
// past SQLite's own busy_timeout (5 s), and succeeds once the lock goes; if the lock stays, it
// fails after its bound, saying which process had the database open, and changes nothing.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { BUSY_TIMEOUT_MS } from '../../main/engine/store/busy.js';
import { killTracked, REPO, scratch, tendAsync, tendOk, track } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';

let box: ReturnType<typeof scratch>;
beforeEach(() => {
  box = scratch('tend-busy-');
});
afterEach(async () => {
  await killTracked();
  box.remove();
});

/** Another process holding the write lock of tend.db until `release` exists. */
async function holdLock(dir: string): Promise<{ child: ChildProcess; release: () => void }> {
  const script = `
    const Database = require('better-sqlite3');
    const fs = require('node:fs');
    const db = new Database(process.argv[1]);
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked\\n');
    const t = setInterval(() => { if (fs.existsSync(process.argv[2])) { db.exec('COMMIT'); db.close(); clearInterval(t); } }, 20);
  `;
  const child = spawn(process.execPath, ['-e', script, join(dir, 'tend.db'), join(dir, 'release')], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
  track(child.pid!);
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  await waitFor(() => out.includes('locked'), 10_000, 'the lock holder to lock');
  return { child, release: () => writeFileSync(join(dir, 'release'), '') };
}

const jobCount = (dir: string) => tendOk<unknown[]>(dir, ['job', 'list', '--json']).length;

it('a post that meets a lock held longer than busy_timeout retries and succeeds once it is released', async () => {
  tendOk(box.dir, ['job', 'post', '--', 'true']);
  const holder = await holdLock(box.dir);
  const started = Date.now();
  const post = tendAsync(box.dir, ['job', 'post', '--json', '--after', '1', '--', 'true']);
  // Released only after SQLite's own wait is over: a command without its own retry has failed by then.
  await waitFor(() => Date.now() - started > BUSY_TIMEOUT_MS + 1500, 20_000, 'the lock to outlast busy_timeout', 100);
  holder.release();
  const r = await post;
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toEqual({ id: 2, status: 'WAITING' });
}, 60_000);

it('a lock that never goes: the post fails after its bound naming the holder, and adds nothing', async () => {
  tendOk(box.dir, ['job', 'post', '--', 'true']);
  const holder = await holdLock(box.dir);
  const r = await tendAsync(box.dir, ['job', 'post', '--after', '1', '--', 'true']);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(new RegExp(`^tend: database .*tend\\.db stayed locked for \\d+ s \\(held by pid ${holder.child.pid} \\(node\\)\\); nothing was changed`));
  holder.release();
  await waitFor(() => jobCount(box.dir) === 1, 10_000, 'the lock to go');
}, 60_000);
