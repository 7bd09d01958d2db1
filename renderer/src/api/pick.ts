// One client, two transports: IPC when preload exposed `window.tend`, HTTP otherwise.
import type { TendBridge } from '../../../contract/calls.js';
import type { ApiClient } from './client.js';
import { createHttpClient } from './http.js';
import { createIpcClient } from './ipc.js';
import { takeToken, watchToken } from './token.js';

declare global {
  interface Window {
    tend?: TendBridge;
  }
}

export function pickClient(): ApiClient {
  if (window.tend) return createIpcClient(window.tend);
  const client = createHttpClient({ base: '', token: takeToken() });
  watchToken((token) => client.setToken?.(token));
  return client;
}
