// The worker's side of the HTTP API: JSON over fetch with the worker's bearer token.
import { TendError, errorMessage } from '../../main/engine/errors.js';

/** The server answered and said no: `status` tells a wrong token (401) from a refusal (403). */
export class ApiRefused extends TendError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(status === 401 || status === 403 || status === 409 ? 'REFUSED' : status >= 500 ? 'UNAVAILABLE' : 'INVALID', message);
  }
}

/** No answer at all: the server is down, unreachable, or not an HTTP server. */
export class Unreachable extends TendError {
  constructor(message: string) {
    super('UNAVAILABLE', message);
  }
}

/** fetch's "fetch failed" hides the reason in its cause (ECONNREFUSED, ENOTFOUND, …). */
function networkReason(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? errorMessage(err);
}

export class ApiClient {
  constructor(
    private readonly server: string,
    private readonly token: string,
  ) {}

  /** `what` names the call in errors as the user would (`u@host:sync start`); default: method and path. */
  async call<T>(method: 'GET' | 'POST', path: string, body?: unknown, signal?: AbortSignal, what = `${method} ${decodeURIComponent(path)}`): Promise<T> {
    // One controller per request: Node 20's fetch leaves a listener on a signal shared by many requests.
    const own = new AbortController();
    const abort = () => own.abort();
    signal?.addEventListener('abort', abort, { once: true });
    let text: string;
    let res: Response;
    try {
      const init: RequestInit = { method, headers: { authorization: `Bearer ${this.token}` }, signal: own.signal };
      if (body !== undefined && method !== 'GET') {
        init.headers = { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' };
        init.body = JSON.stringify(body);
      }
      try {
        res = await fetch(new URL(path, this.server), init);
        text = await res.text();
      } catch (err) {
        if (own.signal.aborted) throw err;
        // "fetch failed" says nothing: name the address and what to check.
        throw new Unreachable(`${what}: no answer from ${this.server} (${networkReason(err)}): check that the daemon runs there (tend daemon status on its host) and that the address (--server, TEND_SERVER) is right`);
      }
    } finally {
      signal?.removeEventListener('abort', abort);
    }
    let parsed: { ok: boolean; value?: T; error?: { code: string; message: string } };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      throw new Unreachable(`${what}: ${this.server} answered HTTP ${res.status}, not JSON: is it a Tend daemon?`);
    }
    if (!parsed.ok) {
      const e = parsed.error ?? { code: 'INTERNAL', message: `HTTP ${res.status}` };
      throw new ApiRefused(res.status, `${what}: ${e.message}`);
    }
    return parsed.value as T;
  }
}
