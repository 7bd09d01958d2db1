// Webhook configuration and the delivery log, as the CLI, the HTTP API and status show them.
// Inputs are validated here, once, for every boundary.
import { z } from 'zod';
import { expandRoutineId, zodIssues } from '../domain/schema.js';
import { invalid, notFound, TendError } from '../errors.js';
import type { Store } from '../store/store.js';
import { hasWebhookTables, WEBHOOK_EVENTS, WebhookStore, type Webhook, type WebhookEvent } from './store.js';
import { redactUrl, urlProblem } from './url.js';

export { deliveryLog, listWebhooks, viewDelivery, type DeliveryLog, type DeliveryView } from './view.js';

export const WebhookInputSchema = z.strictObject({
  url: z.string().superRefine((v, ctx) => {
    const p = urlProblem(v);
    if (p) ctx.addIssue({ code: 'custom', message: p });
  }),
  routine: z.string().min(1).max(1000).optional(),
  events: z
    .union([z.array(z.string().max(32)).max(10), z.string().max(200)])
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return [...WEBHOOK_EVENTS];
      const list = typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : v;
      const bad = list.filter((e) => !(WEBHOOK_EVENTS as readonly string[]).includes(e));
      if (bad.length) {
        ctx.addIssue({ code: 'custom', message: `unknown event ${bad.join(', ')}: use ${WEBHOOK_EVENTS.join(', ')}` });
        return z.NEVER;
      }
      if (list.length === 0) {
        ctx.addIssue({ code: 'custom', message: `name at least one of ${WEBHOOK_EVENTS.join(', ')}` });
        return z.NEVER;
      }
      return WEBHOOK_EVENTS.filter((e) => list.includes(e));
    }),
  secret: z.string().min(8, 'at least 8 characters').max(512).optional(),
});

export type WebhookInput = z.input<typeof WebhookInputSchema>;

/** A receiver as shown outside the CLI's own list: URL redacted, secret never shown. */
export interface WebhookView {
  id: number;
  url: string;
  routineId: string | null;
  events: WebhookEvent[];
  signed: boolean;
  createdAt: string;
}

function webhooks(store: Store): WebhookStore {
  if (!hasWebhookTables(store.db)) throw new TendError('UNAVAILABLE', 'this database predates webhooks: open it once with a newer Tend (e.g. start the daemon) to upgrade it');
  return new WebhookStore(store.db);
}

export function viewWebhook(h: Webhook, showUrl = false): WebhookView {
  return { id: h.id, url: showUrl ? h.url : redactUrl(h.url), routineId: h.routineId, events: h.events, signed: h.secret !== null, createdAt: new Date(h.createdAt).toISOString() };
}

export function addWebhook(store: Store, input: unknown, now: number): Webhook {
  const parsed = WebhookInputSchema.safeParse(input ?? {});
  if (!parsed.success) throw invalid(zodIssues(parsed.error));
  const w = parsed.data;
  let routineId: string | null = null;
  if (w.routine !== undefined) {
    routineId = expandRoutineId(w.routine);
    if (!store.routines.get(routineId)) throw invalid({ path: 'routine', message: `unknown routine ${routineId}` });
  }
  const wh = webhooks(store);
  return wh.addHook({ url: w.url, routineId, events: w.events, secret: w.secret ?? null }, now);
}

export function removeWebhook(store: Store, id: number, now: number): Webhook {
  const wh = webhooks(store);
  const h = wh.hook(id);
  if (!h || !wh.removeHook(id, now)) throw notFound(`webhook ${id}`);
  return h;
}

export function parseWebhookId(raw: unknown): number {
  const id = typeof raw === 'number' ? raw : Number(raw);
  if (!Number.isSafeInteger(id) || id <= 0) throw invalid({ path: 'id', message: `a webhook id (positive integer), got "${String(raw)}"` });
  return id;
}
