// `tend webhook test ID`: one POST of a `test` payload, now, outside the queue.
import { createHmac } from 'node:crypto';
import { errorMessage, notFound } from '../errors.js';
import type { Store } from '../store/store.js';
import { tendVersion } from '../version.js';
import { buildPayload } from './payload.js';
import { hasWebhookTables, WebhookStore } from './store.js';

export async function sendTest(store: Store, id: number, now: number, timeoutMs = 10_000): Promise<{ ok: boolean; status: number | null; error: string | null }> {
  const hook = hasWebhookTables(store.db) ? new WebhookStore(store.db).hook(id) : null;
  if (!hook) throw notFound(`webhook ${id}`);
  const body = JSON.stringify(
    buildPayload({ id: `tend-test-${now}`, event: 'test', at: now, message: `test delivery to webhook ${id}`, def: null, routineId: null, run: null, source: { eventId: null, type: null } }),
  );
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': `tend/${tendVersion()}`, 'x-tend-event': 'test', 'x-tend-delivery': 'test', 'x-tend-attempt': '1' };
  if (hook.secret) headers['x-tend-signature'] = `sha256=${createHmac('sha256', hook.secret).update(body).digest('hex')}`;
  try {
    const res = await fetch(hook.url, { method: 'POST', headers, body, signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel().catch(() => undefined);
    return { ok: res.status >= 200 && res.status < 300, status: res.status, error: null };
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause;
    return { ok: false, status: null, error: cause?.code ?? errorMessage(err) };
  }
}
