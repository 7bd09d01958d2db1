// The renderer's one API client. Two transports implement it: HTTP + server-sent events
// (browser mode, http.ts) and Electron IPC (ipc.ts). Pages and the store see only this.
import type { Args, Channel, Push, PushName, Result, Ret } from '../../../contract/calls.js';

export type ConnectionState = 'connecting' | 'live' | 'offline' | 'unauthorized';

export type LogStream = 'stdout' | 'stderr';

export interface FollowHandlers {
  /** Text as it is written (the first call carries the tail already on disk). */
  chunk(text: string): void;
  /** The run is over and everything it wrote has been delivered, or following failed. */
  end(reason: string): void;
}

export interface ApiClient {
  readonly kind: 'http' | 'ipc';
  /** Where the engine is, for people: "daemon at 127.0.0.1:4100". */
  readonly where: string;
  /** The same, once the transport has asked (the desktop app says whether it runs the engine). */
  describe(): Promise<string>;
  call<C extends Channel>(channel: C, args: Args<C>): Promise<Result<Ret<C>>>;
  on<E extends PushName>(event: E, cb: (payload: Push[E]) => void): () => void;
  onConnection(cb: (state: ConnectionState) => void): () => void;
  /** Follow a run's output; returns stop. */
  follow(runId: string, stream: LogStream, h: FollowHandlers): () => void;
  /** Browser mode: use this token from now on (a corrected `#token=`), reconnecting if it was refused. */
  setToken?(token: string): void;
  close(): void;
}

/** A tiny typed emitter shared by the transports. */
export class Emitter<M extends { [K in keyof M]: unknown }> {
  private subs = new Map<keyof M, Set<(p: never) => void>>();
  on<K extends keyof M>(k: K, cb: (p: M[K]) => void): () => void {
    let set = this.subs.get(k);
    if (!set) this.subs.set(k, (set = new Set()));
    set.add(cb as (p: never) => void);
    return () => set.delete(cb as (p: never) => void);
  }
  emit<K extends keyof M>(k: K, p: M[K]): void {
    for (const cb of this.subs.get(k) ?? []) {
      try {
        (cb as (p: M[K]) => void)(p);
      } catch (err) {
        console.error(`tend: a ${String(k)} listener failed`, err);
      }
    }
  }
}

/** Errors a transport produces itself, in the contract's shape. */
export function transportError(code: 'NETWORK' | 'INTERNAL', message: string): Result<never> {
  return { ok: false, error: { code, message } };
}
