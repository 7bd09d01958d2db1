// The IPC surface against the type-only contract (contract/calls.ts): the same channels, the
// same pushed events. Checked by the compiler (npm run typecheck) and pinned at runtime.
import { describe, expect, it } from 'vitest';
import type { AppChannel, AppInfo, IpcChannel, PushEvent } from '../../main/app/ipc-channels.js';
import { PUSH_EVENTS } from '../../main/app/ipc-channels.js';
import type { Channel } from '../../contract/routes.js';
import type { AppCalls, AppInfo as ContractAppInfo, Invoke, PushName, TendBridge } from '../../contract/calls.js';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const assert = <T extends true>(value: T): T => value;

// Every contract call is an IPC channel, and the only IPC channels beyond the contract are the
// app's own (app:info), whether or not the contract lists them yet.
assert<Same<keyof Invoke, Channel>>(true);
assert<Same<Exclude<keyof TendBridge, 'on' | AppChannel>, Channel>>(true);
assert<Same<Exclude<IpcChannel, AppChannel>, Channel>>(true);
// The app's own calls: the same names, and app:info answers what the contract says it does.
assert<Same<AppChannel, keyof AppCalls>>(true);
assert<Same<AppInfo, ContractAppInfo>>(true);
// Pushed events: exactly the contract's.
assert<Same<PushEvent, PushName>>(true);

describe('the IPC surface against the contract', () => {
  it('lists the pushed events the contract names (event, pass)', () => {
    const names: Record<PushName, true> = { event: true, pass: true };
    expect([...PUSH_EVENTS].sort()).toEqual(Object.keys(names).sort());
  });
});
