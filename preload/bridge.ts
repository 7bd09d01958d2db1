// What preload exposes as `window.tend`, built from the channel list: one method per channel,
// each resolving to the `{ok,value} | {ok,error}` main answers (contract: TendBridge), plus `on`
// for pushed events. Pure: it takes the few ipcRenderer functions it needs, and never hands
// ipcRenderer (or an IPC event, which carries the sender) to the page.
import { IPC_CHANNELS, PUSH_EVENTS, pushChannel, type PushEvent } from '../main/app/ipc-channels.js';

export interface IpcRendererLike {
  invoke(channel: string, ...args: unknown[]): Promise<unknown>;
  on(channel: string, listener: (event: unknown, payload: unknown) => void): unknown;
  removeListener(channel: string, listener: (event: unknown, payload: unknown) => void): unknown;
}

type Failure = { ok: false; error: { code: string; message: string } };
type Method = (args?: unknown) => Promise<unknown>;

const failure = (message: string): Failure => ({ ok: false, error: { code: 'INTERNAL', message } });

export function buildBridge(ipc: IpcRendererLike): Record<string, Method | ((event: string, cb: (payload: unknown) => void) => () => void)> {
  const bridge: Record<string, Method | ((event: string, cb: (payload: unknown) => void) => () => void)> = {};
  for (const channel of IPC_CHANNELS) {
    bridge[channel] = async (args?: unknown) => {
      try {
        return await ipc.invoke(channel, args);
      } catch (err) {
        // Only a broken IPC gets here (main answers failures as values).
        return failure(`IPC ${channel}: ${err instanceof Error ? err.message : String(err)}`);
      }
    };
  }
  bridge.on = (event: string, cb: (payload: unknown) => void) => {
    if (!(PUSH_EVENTS as readonly string[]).includes(event)) throw new TypeError(`tend.on: unknown event ${String(event)}`);
    if (typeof cb !== 'function') throw new TypeError('tend.on: the callback must be a function');
    const channel = pushChannel(event as PushEvent);
    const listener = (_event: unknown, payload: unknown) => cb(payload);
    ipc.on(channel, listener);
    return () => void ipc.removeListener(channel, listener);
  };
  return Object.freeze(bridge);
}
