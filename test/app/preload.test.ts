// What preload exposes as window.tend: exactly one method per contract channel (plus app:info)
// and `on` for pushes — from the pure bridge, and from the real sandboxed bundle.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_CHANNELS, IPC_CHANNELS, pushChannel } from '../../main/app/ipc-channels.js';
import { ROUTES } from '../../contract/routes.js';
import { buildBridge, type IpcRendererLike } from '../../preload/bridge.js';

const REPO = resolve(fileURLToPath(new URL('../../', import.meta.url)));
const EXPECTED = [...Object.keys(ROUTES), ...APP_CHANNELS, 'on'].sort();

type Listener = (event: unknown, payload: unknown) => void;

function fakeIpc() {
  const invoked: { channel: string; args: unknown[] }[] = [];
  const listeners = new Map<string, Set<Listener>>();
  const ipc: IpcRendererLike & { answer: (channel: string) => unknown } = {
    answer: () => ({ ok: true, value: 'v' }),
    invoke(channel, ...args) {
      invoked.push({ channel, args });
      return Promise.resolve(ipc.answer(channel));
    },
    on(channel, l) {
      if (!listeners.has(channel)) listeners.set(channel, new Set());
      listeners.get(channel)!.add(l);
    },
    removeListener(channel, l) {
      listeners.get(channel)?.delete(l);
    },
  };
  const emit = (channel: string, payload: unknown) => {
    for (const l of listeners.get(channel) ?? []) l({ sender: 'the IPC event must not reach the page' }, payload);
  };
  return { ipc, invoked, listeners, emit };
}

describe('buildBridge', () => {
  it('has one method per contract channel, app:info, and on — nothing else (never ipcRenderer)', () => {
    const bridge = buildBridge(fakeIpc().ipc);
    expect(Object.keys(bridge).sort()).toEqual(EXPECTED);
    expect([...IPC_CHANNELS, 'on'].sort()).toEqual(EXPECTED);
    expect(Object.isFrozen(bridge)).toBe(true);
  });

  it('invokes the channel with the argument and resolves to the Result main answered, failures included', async () => {
    const f = fakeIpc();
    const bridge = buildBridge(f.ipc);
    expect(await (bridge['routines.show'] as (a: unknown) => Promise<unknown>)({ id: 'me@host:a' })).toEqual({ ok: true, value: 'v' });
    f.ipc.answer = () => ({ ok: false, error: { code: 'NOT_FOUND', message: 'routine me@host:a not found' } });
    expect(await (bridge['routines.show'] as (a: unknown) => Promise<unknown>)({ id: 'me@host:a' })).toEqual({ ok: false, error: { code: 'NOT_FOUND', message: 'routine me@host:a not found' } });
    expect(f.invoked).toEqual([
      { channel: 'routines.show', args: [{ id: 'me@host:a' }] },
      { channel: 'routines.show', args: [{ id: 'me@host:a' }] },
    ]);
  });

  it('turns a broken IPC (no handler, main gone) into a failed Result instead of a rejection', async () => {
    const f = fakeIpc();
    f.ipc.invoke = () => Promise.reject(new Error("No handler registered for 'routines.list'"));
    const bridge = buildBridge(f.ipc);
    expect(await (bridge['routines.list'] as (a: unknown) => Promise<unknown>)({})).toEqual({ ok: false, error: { code: 'INTERNAL', message: "IPC routines.list: No handler registered for 'routines.list'" } });
  });

  it('on(event) hands the page the payload only, and its return unsubscribes', () => {
    const f = fakeIpc();
    const on = buildBridge(f.ipc).on as (e: string, cb: (p: unknown) => void) => () => void;
    const got: unknown[] = [];
    const off = on('event', (p) => got.push(p));
    f.emit(pushChannel('event'), { id: 1, type: 'run:failed' });
    f.emit(pushChannel('pass'), { at: 1 });
    expect(got).toEqual([{ id: 1, type: 'run:failed' }]);
    off();
    f.emit(pushChannel('event'), { id: 2 });
    expect(got).toHaveLength(1);
    expect(f.listeners.get(pushChannel('event'))!.size).toBe(0);
  });

  it('on refuses unknown events and non-functions', () => {
    const on = buildBridge(fakeIpc().ipc).on as (e: string, cb: unknown) => () => void;
    expect(() => on('ipc', () => undefined)).toThrow('tend.on: unknown event ipc');
    expect(() => on('event', 'not a function')).toThrow('the callback must be a function');
  });
});

describe('the preload bundle (dist/preload/preload.cjs)', () => {
  let out: string;
  let code: string;
  beforeAll(() => {
    out = mkdtempSync(join(tmpdir(), 'tend-preload-'));
    const r = spawnSync(process.execPath, [join(REPO, 'scripts', 'build-preload.mjs'), '--out', out], { cwd: REPO, encoding: 'utf8', timeout: 120_000 });
    if (r.status !== 0) throw new Error(`build-preload failed: ${r.stderr}${r.stdout}`);
    code = readFileSync(join(out, 'preload.cjs'), 'utf8');
  });
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it("requires nothing but 'electron' (a sandboxed preload cannot load files)", () => {
    const required = [...code.matchAll(/\brequire\(\s*["'`]([^"'`]+)["'`]\s*\)/g)].map((m) => m[1]);
    expect([...new Set(required)]).toEqual(['electron']);
    expect(code).not.toMatch(/\bimport\s*\(/);
  });

  it('runs in a sandbox-like context and exposes exactly the channels as window.tend', async () => {
    const exposed = new Map<string, Record<string, (...a: unknown[]) => unknown>>();
    const f = fakeIpc();
    const electron = { contextBridge: { exposeInMainWorld: (name: string, api: Record<string, (...a: unknown[]) => unknown>) => exposed.set(name, api) }, ipcRenderer: f.ipc };
    const sandboxRequire = (id: string) => {
      if (id === 'electron') return electron;
      throw new Error(`module not found: ${id} (sandboxed preload)`);
    };
    const module = { exports: {} };
    vm.runInNewContext(code, { require: sandboxRequire, module, exports: module.exports, console }, { filename: 'preload.cjs' });
    expect([...exposed.keys()]).toEqual(['tend']);
    const tend = exposed.get('tend')!;
    expect(Object.keys(tend).sort()).toEqual(EXPECTED);
    expect(await tend['jobs.cancel']!({ id: 3 })).toEqual({ ok: true, value: 'v' });
    expect(f.invoked).toEqual([{ channel: 'jobs.cancel', args: [{ id: 3 }] }]);
  });
});
