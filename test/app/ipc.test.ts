import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineClient, type TendClient } from '../../main/app/client.js';
import type { AppInfo } from '../../main/app/host.js';
import { APP_CHANNELS, IPC_CHANNELS } from '../../main/app/ipc-channels.js';
import { ipcTable, isTrustedUrl, senderAllowed, type IpcTable, type TrustedPage } from '../../main/app/ipc.js';
import { ROUTES } from '../../contract/routes.js';
import type { Engine } from '../../main/engine/engine.js';
import { buildEngine } from '../../main/engine/host/build-engine.js';

let dir: string;
let engine: Engine;
let client: TendClient;
let table: IpcTable;
const info: AppInfo = { mode: 'engine', dataDir: '/x', url: 'http://127.0.0.1:1', enginePid: 1, version: '0.1.0' };

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tend-ipc-'));
  engine = buildEngine({ dataDir: dir });
  client = engineClient(engine);
  table = ipcTable({ client: () => client, info: () => info });
});
afterAll(async () => {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the IPC handler table', () => {
  it('has a handler for every contract channel (every ROUTES entry) and the app channels, nothing else', () => {
    expect(Object.keys(table).sort()).toEqual([...Object.keys(ROUTES), ...APP_CHANNELS].sort());
    expect([...IPC_CHANNELS].sort()).toEqual(Object.keys(table).sort());
  });

  it('answers with values, never throws: ok', async () => {
    expect(await table['routines.list']({})).toEqual({ ok: true, value: [] });
    // No argument is an empty one.
    expect(await table['schedules.list'](undefined)).toEqual({ ok: true, value: [] });
  });

  it('validates every argument with the shared schema before anything runs', async () => {
    expect(await table['routines.show']({ id: 'not an id' })).toEqual({
      ok: false,
      error: { code: 'INVALID', message: 'id: must look like user@COMPUTER:path/to/code', issues: [{ path: 'id', message: 'must look like user@COMPUTER:path/to/code' }] },
    });
    expect(await table['routines.list']({ sneaky: true })).toMatchObject({ ok: false, error: { code: 'INVALID', issues: [{ path: '', message: 'unknown field sneaky' }] } });
    expect(await table['schedules.setMode']({ name: 'default', mode: 'off' })).toMatchObject({ ok: false, error: { code: 'INVALID', issues: [{ path: 'mode' }] } });
    expect(await table['routines.list']('a string')).toMatchObject({ ok: false, error: { code: 'INVALID' } });
  });

  it('creates through the engine and reports engine errors with their code', async () => {
    const created = await table['routines.create']({ id: 'me@host:reports/daily', command: 'true', runtimes: ['07:00'], tz: 'UTC' });
    expect(created).toMatchObject({ ok: true, value: { id: 'me@host:reports/daily' } });
    expect(await table['routines.list']({})).toMatchObject({ ok: true, value: [{ id: 'me@host:reports/daily', today: null }] });
    expect(await table['routines.show']({ id: 'me@host:nope' })).toEqual({ ok: false, error: { code: 'NOT_FOUND', message: 'routine me@host:nope not found' } });
    expect(await table['routines.create']({ id: 'me@host:bad', command: 'true', cron: '61 * * * *' })).toMatchObject({ ok: false, error: { code: 'INVALID', issues: [{ path: 'cron' }] } });
  });

  it('app:info says how the app runs its engine, and takes no arguments', async () => {
    expect(await table['app:info'](undefined)).toEqual({ ok: true, value: info });
    expect(await table['app:info']({})).toEqual({ ok: true, value: info });
    expect(await table['app:info']({ x: 1 })).toMatchObject({ ok: false, error: { code: 'INVALID' } });
  });
});

describe('the IPC sender check', () => {
  const index = '/opt/Tend/resources/app.asar/dist/renderer/index.html';
  const page: TrustedPage = { kind: 'file', indexFile: index };

  it("trusts the app's own page at any route", () => {
    expect(isTrustedUrl(`file://${index}`, page)).toBe(true);
    expect(isTrustedUrl(`file://${index}#/routine/me%40host%3Aa`, page)).toBe(true);
  });

  it('trusts nothing else: another file, the web, data: URLs, nothing at all', () => {
    expect(isTrustedUrl('file:///tmp/evil.html', page)).toBe(false);
    expect(isTrustedUrl(`file://${index.replace('index.html', 'other.html')}`, page)).toBe(false);
    expect(isTrustedUrl('https://example.com/', page)).toBe(false);
    expect(isTrustedUrl('data:text/html,<script>1</script>', page)).toBe(false);
    expect(isTrustedUrl('', page)).toBe(false);
    expect(isTrustedUrl(undefined, page)).toBe(false);
    expect(isTrustedUrl('not a url', page)).toBe(false);
  });

  it("needs the app's own window and its top frame", () => {
    const url = `file://${index}#/today`;
    expect(senderAllowed({ url, topFrame: true, ownWindow: true }, page)).toBe(true);
    expect(senderAllowed({ url, topFrame: false, ownWindow: true }, page)).toBe(false);
    expect(senderAllowed({ url, topFrame: true, ownWindow: false }, page)).toBe(false);
    expect(senderAllowed({ url: null, topFrame: true, ownWindow: true }, page)).toBe(false);
  });
});
