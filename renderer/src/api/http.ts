// Browser mode: the contract over the daemon's HTTP API, pushed events over server-sent events
// read with fetch streaming (so the bearer token travels in a header, never in a URL).
import { buildRequest, EXTRA_ROUTES } from '../../../main/engine/api/routes.js';
import type { Args, Channel, Push, PushName, Result, Ret } from '../../../preload/contract.js';
import { Emitter, transportError, type ApiClient, type ConnectionState, type FollowHandlers, type LogStream } from './client.js';
import { readSse } from './sse.js';

export interface HttpOptions {
  /** Origin of the daemon ('' = this page's origin). */
  base: string;
  token: string | null;
  fetch?: typeof fetch;
  /** Reconnect delays grow to this. */
  maxBackoffMs?: number;
}

export function createHttpClient(o: HttpOptions): ApiClient {
  const doFetch = o.fetch ?? globalThis.fetch.bind(globalThis);
  const push = new Emitter<Push>();
  const conn = new Emitter<{ state: ConnectionState }>();
  let state: ConnectionState = 'connecting';
  let lastId: number | null = null;
  let closed = false;
  let token = o.token;
  let streaming = false;
  const streamAbort = new AbortController();
  const headers = (json: boolean): Record<string, string> => ({
    ...(token ? { authorization: `Bearer ${token}` } : {}),
    ...(json ? { 'content-type': 'application/json' } : {}),
  });
  const setState = (s: ConnectionState) => {
    if (s === state) return;
    state = s;
    conn.emit('state', s);
  };

  async function call<C extends Channel>(channel: C, args: Args<C>): Promise<Result<Ret<C>>> {
    const req = buildRequest(channel, (args ?? {}) as Record<string, unknown>);
    let res: Response;
    try {
      res = await doFetch(o.base + req.url, { method: req.method, headers: headers(req.body !== undefined), body: req.body !== undefined ? JSON.stringify(req.body) : undefined });
    } catch (err) {
      return transportError('NETWORK', `cannot reach the daemon: ${(err as Error).message}`);
    }
    if (res.status === 401) setState('unauthorized');
    try {
      return (await res.json()) as Result<Ret<C>>;
    } catch {
      return transportError('INTERNAL', `unexpected answer from the daemon (HTTP ${res.status})`);
    }
  }

  async function streamEvents(): Promise<void> {
    const first = Math.min(500, o.maxBackoffMs ?? 8000);
    let backoff = first;
    while (!closed) {
      try {
        const q = lastId !== null ? `?after=${lastId}` : '';
        const res = await doFetch(`${o.base}${EXTRA_ROUTES.events.path}${q}`, { headers: { ...headers(false), accept: 'text/event-stream' }, signal: streamAbort.signal });
        if (res.status === 401) {
          setState('unauthorized');
          return;
        }
        if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
        setState('live');
        backoff = first;
        await readSse(
          res.body,
          (m) => {
            if (m.event === 'event') {
              const e = JSON.parse(m.data) as Push['event'];
              if (lastId === null || e.id > lastId) lastId = e.id;
              push.emit('event', e);
            } else if (m.event === 'pass') {
              push.emit('pass', JSON.parse(m.data) as Push['pass']);
            }
          },
          streamAbort.signal,
        );
      } catch {
        // fall through to reconnect
      }
      if (closed) return;
      setState('offline');
      await new Promise((r) => setTimeout(r, backoff));
      backoff = Math.min(backoff * 2, o.maxBackoffMs ?? 8000);
    }
  }

  function follow(runId: string, stream: LogStream, h: FollowHandlers): () => void {
    const abort = new AbortController();
    let ended = false;
    const end = (reason: string) => {
      if (ended) return;
      ended = true;
      h.end(reason);
    };
    const path = EXTRA_ROUTES.follow.path.replace(':id', encodeURIComponent(runId));
    void (async () => {
      try {
        const res = await doFetch(`${o.base}${path}?stream=${stream}&tailBytes=65536`, { headers: { ...headers(false), accept: 'text/event-stream' }, signal: abort.signal });
        if (!res.ok || !res.body) {
          let message = `HTTP ${res.status}`;
          try {
            message = ((await res.json()) as Result<never> & { ok: false }).error.message;
          } catch {
            /* not JSON */
          }
          return end(message);
        }
        await readSse(
          res.body,
          (m) => {
            if (m.event === 'chunk') h.chunk(JSON.parse(m.data) as string);
            else if (m.event === 'end') end((JSON.parse(m.data) as { reason?: string }).reason ?? 'finished');
          },
          abort.signal,
        );
        end('disconnected');
      } catch (err) {
        if (!abort.signal.aborted) end(`disconnected: ${(err as Error).message}`);
      }
    })();
    return () => {
      ended = true;
      abort.abort();
    };
  }

  /** The event stream ends on a refused token; a new token starts it again. */
  function startStream(): void {
    if (streaming || closed) return;
    streaming = true;
    void streamEvents().finally(() => (streaming = false));
  }

  startStream();
  const where = `daemon at ${(o.base || (globalThis as { location?: { origin: string } }).location?.origin || 'this address').replace(/^https?:\/\//, '')}`;
  return {
    kind: 'http',
    where,
    describe: async () => where,
    call,
    on: <E extends PushName>(event: E, cb: (p: Push[E]) => void) => push.on(event, cb),
    onConnection: (cb) => {
      cb(state);
      return conn.on('state', cb);
    },
    follow,
    setToken(next: string) {
      if (next === token) return;
      token = next;
      startStream();
    },
    close() {
      closed = true;
      streamAbort.abort();
    },
  };
}
