// The one client of the HTTP API: the app attached to a daemon (main/app/client.ts), the browser
// page (renderer/src/api/http.ts) and the remote worker and `tend report` (worker/remote/) all go
// through it. fetch is passed in; nothing here needs Node, so the renderer bundles it as is.
// One rule for failures: the server's code and message when it answered with `{ok: false}`,
// NETWORK when nothing answered, INTERNAL when something that is not the API answered.
import { buildRequest, type Channel } from './routes.js';
import type { Args, Result, Ret } from './calls.js';
import { ApiError, errorOfBody } from './api-error.js';
import { readSse, type SseMessage } from './sse.js';

export interface ApiOptions {
  /** The daemon's origin, e.g. `http://127.0.0.1:4100` ('' = the page's own). */
  base: string;
  /** The bearer token; a function when it can change (a corrected `#token=`). */
  token: string | null | (() => string | null);
  fetch?: typeof fetch;
  /** Per request (streams excepted); none by default. */
  timeoutMs?: number;
  /** Added to a "no answer" message: what to check (the worker names --server). */
  unreachableHint?: string;
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** Names the call in messages as the user would (`u@host:sync start`); without it, messages are the server's own. */
  what?: string;
}

export interface StreamOptions extends RequestOptions {
  /** The server accepted the stream (before its first message). */
  onOpen?: () => void;
}

export interface Api {
  /** Throws ApiError. */
  request<T>(method: string, path: string, body?: unknown, o?: RequestOptions): Promise<T>;
  /** A contract channel, by its route. Throws ApiError. */
  call<C extends Channel>(channel: C, args: Args<C>, o?: RequestOptions): Promise<Ret<C>>;
  /** The same, failures as values. */
  result<C extends Channel>(channel: C, args: Args<C>, o?: RequestOptions): Promise<Result<Ret<C>>>;
  /**
   * Read a server-sent event stream until it ends (resolves) or `signal` aborts. A refusal
   * (401, 404 …) throws ApiError before any message; a dropped connection rejects.
   */
  stream(path: string, onMessage: (m: SseMessage) => void, o?: StreamOptions): Promise<void>;
}

/** fetch's "fetch failed" hides the reason in its cause (ECONNREFUSED, ENOTFOUND, …). */
function networkReason(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

export function createApi(o: ApiOptions): Api {
  const doFetch = o.fetch ?? globalThis.fetch.bind(globalThis);
  const root = o.base.replace(/\/+$/, '');
  const where = o.base || 'the daemon';
  const token = typeof o.token === 'function' ? o.token : () => o.token as string | null;
  const headers = (extra: Record<string, string>): Record<string, string> => {
    const t = token();
    return t ? { authorization: `Bearer ${t}`, ...extra } : extra;
  };
  const prefix = (what: string | undefined) => (what ? `${what}: ` : '');

  /**
   * One exchange: fetch, then `read` the answer, both under the caller's signal and the timeout
   * (an answer whose body stalls times out too). One controller per request: Node 20's fetch
   * leaves a listener on a signal shared by many requests.
   */
  async function exchange<R>(method: string, path: string, init: { body?: unknown; accept?: string; timeout: boolean }, ro: RequestOptions, read: (res: Response) => Promise<R>): Promise<R> {
    const own = new AbortController();
    const abort = () => own.abort(ro.signal?.reason);
    if (ro.signal?.aborted) abort();
    ro.signal?.addEventListener('abort', abort, { once: true });
    const ms = init.timeout ? o.timeoutMs : undefined;
    let timedOut = false;
    const timer = ms !== undefined ? setTimeout(() => ((timedOut = true), own.abort()), ms) : undefined;
    const extra: Record<string, string> = {};
    if (init.body !== undefined) extra['content-type'] = 'application/json';
    if (init.accept) extra['accept'] = init.accept;
    const unanswered = (reason: string) => new ApiError('NETWORK', `${prefix(ro.what)}no answer from ${where} (${reason})${o.unreachableHint ? `: ${o.unreachableHint}` : ''}`);
    try {
      let res: Response;
      try {
        res = await doFetch(root + path, { method, headers: headers(extra), body: init.body !== undefined ? JSON.stringify(init.body) : undefined, signal: own.signal });
      } catch (err) {
        // The caller gave up: not a failure of the daemon.
        if (ro.signal?.aborted) throw err;
        throw unanswered(timedOut ? `no answer within ${ms} ms` : networkReason(err));
      }
      try {
        return await read(res);
      } catch (err) {
        if (timedOut && !ro.signal?.aborted) throw unanswered(`the answer did not arrive within ${ms} ms`);
        throw err;
      }
    } finally {
      clearTimeout(timer);
      ro.signal?.removeEventListener('abort', abort);
    }
  }

  /** What a failed answer says, as an ApiError: the server's code when it gave one. */
  function refusal(status: number, body: unknown, what: string | undefined): ApiError {
    const e = errorOfBody(body);
    if (e) return new ApiError(e.code, `${prefix(what)}${e.message}`, e.issues ?? [], status);
    // Fastify's own answers (431, 503 while closing) carry a message but no code.
    const message = typeof (body as { message?: unknown })?.message === 'string' ? (body as { message: string }).message : `HTTP ${status}`;
    return new ApiError('INTERNAL', `${prefix(what)}${message}`, [], status);
  }

  function notJson(status: number, what: string | undefined): ApiError {
    return new ApiError('INTERNAL', `${prefix(what)}${where} answered HTTP ${status}, not JSON: is it a Tend daemon?`, [], status);
  }

  async function request<T>(method: string, path: string, body?: unknown, ro: RequestOptions = {}): Promise<T> {
    return exchange(method, path, { body: method === 'GET' ? undefined : body, timeout: true }, ro, async (res) => {
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw notJson(res.status, ro.what);
      }
      if (typeof parsed === 'object' && parsed !== null && (parsed as { ok?: unknown }).ok === true) return (parsed as { value: T }).value;
      throw refusal(res.status, parsed, ro.what);
    });
  }

  async function call<C extends Channel>(channel: C, args: Args<C>, ro?: RequestOptions): Promise<Ret<C>> {
    const req = buildRequest(channel, (args ?? {}) as Record<string, unknown>);
    return request<Ret<C>>(req.method, req.url, req.body, ro);
  }

  return {
    request,
    call,
    async result(channel, args, ro) {
      try {
        return { ok: true, value: await call(channel, args, ro) };
      } catch (err) {
        if (err instanceof ApiError) return { ok: false, error: err.toResultError() };
        return { ok: false, error: { code: 'INTERNAL', message: err instanceof Error ? err.message : String(err) } };
      }
    },
    async stream(path, onMessage, ro = {}) {
      // No timeout: a stream stays open for as long as the caller reads it.
      await exchange('GET', path, { accept: 'text/event-stream', timeout: false }, ro, async (res) => {
        if (!res.ok) {
          let body: unknown = null;
          try {
            body = JSON.parse(await res.text());
          } catch {
            /* not JSON: the status says enough */
          }
          throw refusal(res.status, body, ro.what);
        }
        if (!res.body) throw new ApiError('INTERNAL', `${prefix(ro.what)}${where} answered HTTP ${res.status} without a body`, [], res.status);
        ro.onOpen?.();
        await readSse(res.body, onMessage, ro.signal);
      });
    },
  };
}
