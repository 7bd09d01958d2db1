// The engine as the app sees it, wherever it runs: in this process (the app owns the data dir) or
// in a headless daemon reached over its HTTP API (the app attached to it). IPC handlers, the tray
// and notifications talk to a TendClient and never know which.
import { ApiError } from '../../contract/api-error.js';
import { createApi } from '../../contract/api-client.js';
import { EXTRA_ROUTES, type Channel } from '../../contract/routes.js';
import { dispatch, makeMethods } from '../engine/api/methods.js';
import type { Engine } from '../engine/engine.js';
import type { PassReport } from '../engine/scheduler/context.js';
import type { EventRow } from '../engine/store/events.js';
import { TendError, errorMessage } from '../engine/errors.js';
import type { Result, ResultError } from '../../contract/calls.js';

export interface TendClient {
  readonly kind: 'engine' | 'attached';
  /** Call a contract channel. Throws ApiError (or TendError) when the call fails. */
  call(channel: Channel, args: unknown): Promise<unknown>;
  /** Engine events and passes as they happen; returns unsubscribe. */
  subscribe(h: { event?: (e: EventRow) => void; pass?: (p: PassReport) => void }): () => void;
  close(): void;
}

/** What crosses IPC: the contract's result. */
export type CallResult = Result<unknown>;

/** Errors as values: what crosses IPC (Electron mangles thrown errors). */
export function toResult(err: unknown): { ok: false; error: ResultError } {
  if (err instanceof ApiError) return { ok: false, error: err.toResultError() };
  if (err instanceof TendError) {
    return { ok: false, error: err.issues.length ? { code: err.code, message: err.message, issues: err.issues } : { code: err.code, message: err.message } };
  }
  return { ok: false, error: { code: 'INTERNAL', message: errorMessage(err) } };
}

/**
 * In-process: calls go through `dispatch`; events are read from the events table — the one
 * source, as the API's event stream reads it: rows appended by the pass, by calls (a routine
 * created, a run requested) and by other processes (the CLI) alike. The bus says when to look;
 * a slow poll catches rows written elsewhere.
 */
export function engineClient(engine: Engine, o: { pollMs?: number } = {}): TendClient {
  const methods = makeMethods(engine);
  const subs = new Set<() => void>();
  /** Each subscriber's "look now". */
  const tails = new Set<() => void>();
  return {
    kind: 'engine',
    call: async (channel, args) => {
      const value = await dispatch(methods, channel, args);
      // A call may have appended events: deliver them now, not at the next pass or poll.
      for (const s of tails) s();
      return value;
    },
    subscribe(h) {
      let lastId = latestEventId(engine);
      let scheduled = false;
      let closed = false;
      const drain = () => {
        scheduled = false;
        if (closed) return;
        try {
          for (;;) {
            const rows = engine.store.events.after(lastId, 500);
            for (const e of rows) h.event?.(e);
            if (rows.length) lastId = rows[rows.length - 1]!.id;
            if (rows.length < 500) break;
          }
        } catch {
          /* the store is closing */
        }
      };
      const soon = () => {
        if (scheduled || closed) return;
        scheduled = true;
        setImmediate(drain);
      };
      const onPass = (p: PassReport) => {
        drain();
        if (!closed) h.pass?.(p);
      };
      engine.bus.on('event', soon);
      engine.bus.on('pass', onPass);
      tails.add(soon);
      const poll = setInterval(drain, o.pollMs ?? 1000);
      poll.unref?.();
      const off = () => {
        closed = true;
        clearInterval(poll);
        tails.delete(soon);
        engine.bus.off('event', soon);
        engine.bus.off('pass', onPass);
        subs.delete(off);
      };
      subs.add(off);
      return off;
    },
    close() {
      for (const off of subs) off();
    },
  };
}

function latestEventId(engine: Engine): number {
  return (engine.store.db.prepare(`SELECT COALESCE(MAX(id), 0) AS id FROM events`).get() as { id: number }).id;
}

export interface HttpClientOptions {
  url: string;
  token: string;
  fetch?: typeof fetch;
  /** Per call. */
  timeoutMs?: number;
  /** Reconnect delays of the event stream grow up to this. */
  maxBackoffMs?: number;
  /** Connection state of the event stream, for the tray ("daemon unreachable"). */
  onConnection?: (up: boolean, why?: string) => void;
}

/** Attached: the engine of a headless daemon, through the API's one client (contract/api-client.ts). */
export function httpClient(o: HttpClientOptions): TendClient {
  const api = createApi({ base: o.url, token: o.token, fetch: o.fetch, timeoutMs: o.timeoutMs ?? 30_000 });
  const eventSubs = new Set<(e: EventRow) => void>();
  const passSubs = new Set<(p: PassReport) => void>();
  let stream: AbortController | null = null;
  let started = false;
  let closed = false;

  const call = (channel: Channel, args: unknown): Promise<unknown> => api.call(channel, args as never);

  async function streamEvents(): Promise<void> {
    // Start from the newest event, so that a reconnect replays exactly what was missed.
    let lastId: number | null = null;
    try {
      const recent = (await call('events.recent', { limit: 1 })) as EventRow[];
      lastId = recent[0]?.id ?? 0;
    } catch {
      /* the stream's own retries report the daemon as unreachable */
    }
    let backoff = 250;
    while (!closed) {
      stream = new AbortController();
      let why = 'the event stream ended';
      try {
        const q = lastId !== null ? `?after=${lastId}` : '';
        const onOpen = () => {
          o.onConnection?.(true);
          backoff = 250;
        };
        await api.stream(`${EXTRA_ROUTES.events.path}${q}`, (m) => {
          if (m.event === 'event') {
            const e = JSON.parse(m.data) as EventRow;
            lastId = e.id;
            for (const cb of eventSubs) cb(e);
          } else if (m.event === 'pass') {
            const p = JSON.parse(m.data) as PassReport;
            for (const cb of passSubs) cb(p);
          }
        }, { signal: stream.signal, onOpen });
      } catch (err) {
        why = errorMessage(err);
      }
      if (closed) return;
      o.onConnection?.(false, why);
      await new Promise((r) => setTimeout(r, backoff));
      backoff = Math.min(backoff * 2, o.maxBackoffMs ?? 10_000);
    }
  }

  return {
    kind: 'attached',
    call,
    subscribe(h) {
      if (h.event) eventSubs.add(h.event);
      if (h.pass) passSubs.add(h.pass);
      if (!started && !closed) {
        started = true;
        void streamEvents();
      }
      return () => {
        if (h.event) eventSubs.delete(h.event);
        if (h.pass) passSubs.delete(h.pass);
      };
    },
    close() {
      closed = true;
      stream?.abort();
    },
  };
}
