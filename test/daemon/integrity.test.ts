// After an unclean shutdown the next daemon checks tend.db page by page, off its event loop: it
// passes and answers at once, and the finding arrives as an event. A clean stop needs no check.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { damageIndex } from '../helpers/damage.js';
import { waitFor } from '../helpers/wait.js';
import { scratch, tend } from '../helpers/cli.js';
import { Daemon, stopOwner } from '../helpers/daemon.js';
import { useDaemonBox } from '../helpers/daemon-box.js';

let box: ReturnType<typeof scratch>;
useDaemonBox(() => box);

function storeEvents(dir: string): { type: string; level: string; message: string }[] {
  const db = new Database(join(dir, 'tend.db'), { readonly: true });
  try {
    return db.prepare(`SELECT type, level, message FROM events WHERE type LIKE 'store:%' ORDER BY id`).all() as { type: string; level: string; message: string }[];
  } finally {
    db.close();
  }
}

async function killed(dir: string): Promise<number> {
  const d = await new Daemon(dir, { TEND_DAEMON_INTERVAL_MS: '100' }).ready();
  d.child.kill('SIGKILL');
  await d.exited;
  return d.pid;
}

describe('integrity after an unclean shutdown', () => {
  it('a damaged file: the next daemon still starts and passes, then reports store:damaged; doctor reports it too', async () => {
    box = scratch('tend-integrity-');
    const dir = box.dir;
    const pid = await killed(dir);
    damageIndex(join(dir, 'tend.db'));

    const doctor = tend(dir, ['daemon', 'doctor', '--json']);
    expect(doctor.code).toBe(1);
    const finding = (JSON.parse(doctor.stdout) as { id: string; message: string }[]).find((f) => f.id === 'database-integrity');
    expect(finding?.message).toMatch(/tend\.db failed its integrity check: .*(page|btree)/is);

    const d = await new Daemon(dir, { TEND_DAEMON_INTERVAL_MS: '100' }).ready();
    const damaged = await waitFor(() => storeEvents(dir).find((e) => e.type === 'store:damaged'), 20_000, 'the store:damaged event');
    expect(damaged).toMatchObject({ level: 'error', message: expect.stringContaining(`after pid ${pid} stopped uncleanly`) });
    await waitFor(() => d.stderr.includes('store:damaged'), 10_000, 'the finding in the daemon log');
  });

  it('a sound file: store:checked once; a clean stop leaves nothing to check', async () => {
    box = scratch('tend-integrity-');
    const dir = box.dir;
    const pid = await killed(dir);
    const d = await new Daemon(dir, { TEND_DAEMON_INTERVAL_MS: '100' }).ready();
    const checked = await waitFor(() => storeEvents(dir).find((e) => e.type === 'store:checked'), 20_000, 'the store:checked event');
    expect(checked.message).toContain(`after pid ${pid} stopped uncleanly`);
    d.child.kill('SIGTERM');
    expect((await d.exited).code).toBe(0);

    await new Daemon(dir, { TEND_DAEMON_INTERVAL_MS: '100' }).ready();
    await stopOwner(dir);
    expect(storeEvents(dir).map((e) => e.type)).toEqual(['store:checked']);
  });
});
