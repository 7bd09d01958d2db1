// Browser mode: the contract over the daemon's HTTP API, pushed events over server-sent events
// read with fetch streaming (so the bearer token travels in a header, never in a URL). Requests,
// errors and streams are the API's one client (contract/api-client.ts); this adds the page's
// connection state and reconnects.
import { createApi } from '../../../contract/api-client.js';
import { ApiError } from '../../../contract/api-error.js';
import { EXTRA_ROUTES } from '../../../contract/routes.js';
import type { Args, Channel, Push, PushName, Result, Ret } from '../../../contract/calls.js';
import { Emitter, type ApiClient, type ConnectionState, type FollowHandlers, type LogStream } from './client.js';

export interface HttpOptions {
  /** Origin of the daemon ('' = this page's origin). */
  base: string;
  token: string | null;
  fetch?: typeof fetch;
  /** Reconnect delays grow to this. */
  maxBackoffMs?: number;
}

export function createHttpClient(o: HttpOptions): ApiClient {
  const push = new Emitter<Push>();
  const conn = new Emitter<{ state: ConnectionState }>();
  let state: ConnectionState = 'connecting';
  let lastId: number | null = null;
  let closed = false;
  let token = o.token;
  let streaming = false;
  const streamAbort = new AbortController();
  const api = createApi({ base: o.base, token: () => token, fetch: o.fetch });
  const setState = (s: ConnectionState) => {
    if (s === state) return;
    state = s;
    conn.emit('state', s);
  };

  async function call<C extends Channel>(channel: C, args: Args<C>): Promise<Result<Ret<C>>> {
    const r = await api.result(channel, args);
    if (!r.ok && r.error.code === 'UNAUTHORIZED') setState('unauthorized');
    return r;
  }

  async function streamEvents(): Promise<void> {
    const first = Math.min(500, o.maxBackoffMs ?? 8000);
    let backoff = first;
    while (!closed) {
      try {
        const q = lastId !== null ? `?after=${lastId}` : '';
        const onOpen = () => {
          setState('live');
          backoff = first;
        };
        await api.stream(
          `${EXTRA_ROUTES.events.path}${q}`,
          (m) => {
            if (m.event === 'event') {
              const e = JSON.parse(m.data) as Push['event'];
              if (lastId === null || e.id > lastId) lastId = e.id;
              push.emit('event', e);
            } else if (m.event === 'pass') {
              push.emit('pass', JSON.parse(m.data) as Push['pass']);
            }
          },
          { signal: streamAbort.signal, onOpen },
        );
      } catch (err) {
        if (err instanceof ApiError && err.code === 'UNAUTHORIZED') {
          setState('unauthorized');
          return;
        }
        // anything else: reconnect
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
        await api.stream(
          `${path}?stream=${stream}&tailBytes=65536`,
          (m) => {
            if (m.event === 'chunk') h.chunk(JSON.parse(m.data) as string);
            else if (m.event === 'end') end((JSON.parse(m.data) as { reason?: string }).reason ?? 'finished');
          },
          { signal: abort.signal },
        );
        end('disconnected');
      } catch (err) {
        if (abort.signal.aborted) return;
        // Refused (a run that does not exist …): the server's message; dropped: say so.
        end(err instanceof ApiError && err.status !== null ? err.message : `disconnected: ${(err as Error).message}`);
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
