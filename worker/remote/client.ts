// The worker's side of the HTTP API: JSON over fetch with the worker's bearer token.
import { TendError } from '../../main/engine/errors.js';

export class ApiClient {
  constructor(
    private readonly server: string,
    private readonly token: string,
  ) {}

  async call<T>(method: 'GET' | 'POST', path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
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
      res = await fetch(new URL(path, this.server), init);
      text = await res.text();
    } finally {
      signal?.removeEventListener('abort', abort);
    }
    let parsed: { ok: boolean; value?: T; error?: { code: string; message: string } };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      throw new TendError('UNAVAILABLE', `${method} ${path}: HTTP ${res.status}, not JSON`);
    }
    if (!parsed.ok) {
      const e = parsed.error ?? { code: 'INTERNAL', message: `HTTP ${res.status}` };
      throw new TendError(res.status === 401 || res.status === 403 || res.status === 409 ? 'REFUSED' : res.status >= 500 ? 'UNAVAILABLE' : 'INVALID', `${method} ${path}: ${e.message}`);
    }
    return parsed.value as T;
  }
}
