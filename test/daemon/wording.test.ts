// What doctor and ensure say when something is wrong is what explains it: a reused pid is "now
// another process", a refused launch or an expired command points at its cause, and a bad setting
// stops `ensure` with the setting's own message.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Store } from '../../main/engine/store/store.js';
import { assertBuilt, killTracked, procStartTime, scratch, tend } from '../helpers/cli.js';
import { stopOwner } from '../helpers/daemon.js';

interface Finding { id: string; message: string; action: string | null }
let box: ReturnType<typeof scratch>;
beforeEach(() => {
  assertBuilt();
  box = scratch('tend-wording-');
});
afterEach(async () => {
  await stopOwner(box.dir);
  await killTracked();
  box.remove();
});
const doctor = () => JSON.parse(tend(box.dir, ['daemon', 'doctor', '--json']).stdout) as Finding[];

it('a pidfile naming a live pid that is another process says so', () => {
  // This test process is alive and is not the daemon that the record's start time names.
  writeFileSync(join(box.dir, 'daemon.pid'), JSON.stringify({ pid: process.pid, startTime: (procStartTime(process.pid) ?? 0) + 1, startedAt: '', kind: 'daemon' }));
  const f = doctor().find((x) => x.id === 'stale-pidfile')!;
  expect(f.message).toBe(`daemon.pid names pid ${process.pid}, which is now another process (the daemon that wrote it is gone)`);
});

it('a dead pid is "not running"', () => {
  writeFileSync(join(box.dir, 'daemon.pid'), JSON.stringify({ pid: 2 ** 22 - 1, startTime: 1, startedAt: '', kind: 'daemon' }));
  expect(doctor().find((x) => x.id === 'stale-pidfile')!.message).toBe(`daemon.pid names pid ${2 ** 22 - 1}, which is not running`);
});

it('a refused launch and an expired command are explained by their cause, not by an empty log', () => {
  tend(box.dir, ['routine', 'add', 'me@box:pinned', '--every', '1h', '--', 'true']);
  tend(box.dir, ['routine', 'add', 'bob@gpu:train', '--every', '1h', '--', 'true']);
  const store = Store.open(join(box.dir, 'tend.db'));
  const now = Date.now();
  const insert = (routineId: string, id: string, reason: string) =>
    store.runs.insert({ id, routineId, kind: 'batch', cycle: new Date(now).toISOString().slice(0, 10), scheduledAt: now, attempt: 1, status: 'ERROR', reason, exitCode: null, signal: null, backend: null, runDir: null, manual: false, notBefore: null, createdAt: now, startedAt: null, endedAt: now, heartbeatAt: null });
  insert('me@box:pinned', 'r1', 'LAUNCH_REFUSED: HEAD is 1234567 but the routine pins abcdef0');
  insert('bob@gpu:train', 'r2', 'the start command expired: worker bob@gpu did not fetch it within 60s; it will never run');
  store.close();
  const found = doctor().filter((x) => x.id === 'routine-error');
  expect(found.find((x) => x.message.startsWith('me@box:pinned'))!.action).toMatch(/^it was refused before anything ran, for the reason above/);
  expect(found.find((x) => x.message.startsWith('bob@gpu:train'))!.action).toMatch(/^no worker for bob@gpu fetched the command: start one there \(tend worker --server URL --token \$\(tend worker token bob@gpu\) --computer bob@gpu\)/);
});

it('a run waiting DELAYED for its worker is pointed at that worker, not at slots and dependencies', () => {
  tend(box.dir, ['routine', 'add', 'bob@gpu:train', '--every', '1h', '--', 'true']);
  tend(box.dir, ['routine', 'add', 'me@box:local', '--every', '1h', '--', 'true']);
  const store = Store.open(join(box.dir, 'tend.db'));
  const now = Date.now();
  const insert = (routineId: string, id: string, reason: string) =>
    store.runs.insert({ id, routineId, kind: 'batch', cycle: new Date(now).toISOString().slice(0, 10), scheduledAt: now, attempt: 1, status: 'DELAYED', reason, exitCode: null, signal: null, backend: null, runDir: null, manual: false, notBefore: null, createdAt: now, startedAt: null, endedAt: null, heartbeatAt: null });
  insert('bob@gpu:train', 'r1', 'the start command expired: worker bob@gpu did not fetch it within 60 s; it is sent again once the worker is heard from');
  insert('me@box:local', 'r2', 'waiting for me@box:other (not run on 2026-01-01)');
  store.close();
  const found = doctor().filter((x) => x.id === 'routine-delayed');
  expect(found.find((x) => x.message.startsWith('bob@gpu:train'))!.action).toMatch(/^it waits for the worker of bob@gpu and starts once that worker is heard from: start one there \(tend worker --server URL --token \$\(tend worker token bob@gpu\) --computer bob@gpu\)/);
  expect(found.find((x) => x.message.startsWith('me@box:local'))!.action).toMatch(/^check its dependencies/);
});

it('daemon ensure with a bad setting prints the setting’s message, not only "see daemon.log"', () => {
  mkdirSync(box.dir, { recursive: true });
  const r = tend(box.dir, ['daemon', 'ensure'], { TEND_DAEMON_INTERVAL_MS: 'soon' });
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/^tend: the daemon exited at start \(code 2\): TEND_DAEMON_INTERVAL_MS/);
  expect(r.stderr).not.toContain('see ');
});
