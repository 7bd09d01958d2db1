// Action tools act through the daemon that owns the data dir, over its HTTP API with the token
// in api.json: the owner does the work (stopping its jobs, nudging its loop), exactly as when the
// UI's buttons are pressed. Without a live daemon serving its API, actions are refused.
import { readApiFile } from '../api/auth.js';
import { buildRequest, type Channel } from '../api/routes.js';
import { ownerPid } from '../daemon/nudge.js';
import { TendError } from '../errors.js';

export async function daemonCall<T = unknown>(dataDir: string, channel: Channel, args: Record<string, unknown>, timeoutMs = 60_000): Promise<T> {
  const pid = ownerPid(dataDir);
  if (pid === null) {
    throw new TendError('UNAVAILABLE', 'no daemon owns the data dir, so nothing was done: actions go through the daemon that does the work. Start one with `tend daemon ensure`, then try again.');
  }
  const api = readApiFile(dataDir);
  if (!api || api.pid !== pid) {
    throw new TendError('UNAVAILABLE', `daemon ${pid} owns the data dir but serves no API (TEND_API=off?), so nothing was done`);
  }
  const req = buildRequest(channel, args);
  let res: Response;
  try {
    res = await fetch(api.url + req.url, {
      method: req.method,
      headers: { authorization: `Bearer ${api.token}`, ...(req.body ? { 'content-type': 'application/json' } : {}) },
      body: req.body ? JSON.stringify(req.body) : undefined,
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    throw new TendError('UNAVAILABLE', `the daemon's API at ${api.url} did not answer (${cause ?? (err as Error).message}); nothing is known to have been done`);
  }
  const body = (await res.json().catch(() => null)) as { ok: boolean; value?: T; error?: { code: string; message: string; issues?: { path: string; message: string }[] } } | null;
  if (!body) throw new TendError('UNAVAILABLE', `the daemon answered HTTP ${res.status} without a result`);
  if (!body.ok) {
    const e = body.error!;
    const issues = e.issues?.length ? ` (${e.issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ')})` : '';
    throw new TendError(e.code === 'INVALID' || e.code === 'NOT_FOUND' || e.code === 'CONFLICT' || e.code === 'REFUSED' ? e.code : 'UNAVAILABLE', `${e.message}${issues && !e.message.includes(issues.slice(2, -1)) ? issues : ''}`);
  }
  return body.value as T;
}
