// React access to the store and the API client (one of each per window).
import { createContext, useContext, useEffect, useState, useSyncExternalStore } from 'react';
import { useStore } from 'zustand';
import type { ApiClient } from '../api/client.js';
import type { Resource, TendActions, TendState, TendStore } from '../store/store.js';

export interface AppServices {
  store: TendStore;
  client: ApiClient;
}

export const Services = createContext<AppServices | null>(null);

export function useServices(): AppServices {
  const s = useContext(Services);
  if (!s) throw new Error('Services missing');
  return s;
}

export function useTend<T>(selector: (s: TendState & TendActions) => T): T {
  return useStore(useServices().store, selector);
}

/** Keep a resource loaded and live while the component is mounted. */
export function useWatch(...resources: Resource[]): void {
  const { store } = useServices();
  const key = resources.join('\n');
  useEffect(() => {
    const offs = key.split('\n').filter(Boolean).map((r) => store.getState().watch(r as Resource));
    return () => offs.forEach((off) => off());
  }, [store, key]);
}

/** The current time, re-read every `ms` (only components that show ages use it). */
export function useNow(ms = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

function subscribeHash(cb: () => void): () => void {
  window.addEventListener('hashchange', cb);
  return () => window.removeEventListener('hashchange', cb);
}

/** The hash route, without '#': "/today", "/routine/<id>". */
export function useHash(): string {
  return useSyncExternalStore(subscribeHash, () => location.hash.replace(/^#/, '') || '/today');
}
