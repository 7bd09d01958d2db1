// Webhook routes for the UI and scripts (admin token), registered by webhooks/route-list.ts:
//   GET /api/webhooks                  receivers (URLs redacted, secrets never shown)
//   POST /api/webhooks                 add one: {url, routine?, events?, secret?}
//   DELETE /api/webhooks/:id           remove one (its queued deliveries are dropped)
//   GET /api/webhooks/deliveries       the delivery log, newest first, with counts by state (?limit=)
import type { FastifyRequest } from 'fastify';
import { decimalInt } from '../domain/schema.js';
import { z } from 'zod';
import type { ApiContext } from '../api/server.js';
import type { RouteDoc } from '../api/route-doc.js';
import { DeliveryLogSchema, WebhookViewSchema } from '../api/responses.js';
import { zodIssues } from '../domain/schema.js';
import { invalid, TendError } from '../errors.js';
import { addWebhook, deliveryLog, listWebhooks, parseWebhookId, removeWebhook, viewWebhook, WebhookInputSchema } from './ops.js';

const LogQuery = z.strictObject({ limit: decimalInt(1, 1000).optional() });

/** These routes as the OpenAPI document describes them. */
export const WEBHOOK_ROUTES: RouteDoc[] = [
  { method: 'GET', path: '/api/webhooks', scope: 'admin', summary: 'Webhook receivers (URLs redacted, secrets never shown)', result: z.array(WebhookViewSchema) },
  { method: 'POST', path: '/api/webhooks', scope: 'admin', summary: 'Add a webhook receiver', body: WebhookInputSchema, result: WebhookViewSchema },
  { method: 'DELETE', path: '/api/webhooks/:id', scope: 'admin', summary: 'Remove a receiver (its queued deliveries are dropped)', params: z.object({ id: decimalInt(1) }), result: WebhookViewSchema },
  { method: 'GET', path: '/api/webhooks/deliveries', scope: 'admin', summary: 'The delivery log, newest first, with counts by state', query: LogQuery, result: DeliveryLogSchema },
];

/** The handlers of the routes webhooks/route-list.ts registers. */
export function webhookHandlers(ctx: ApiContext): Record<'list' | 'add' | 'remove' | 'deliveries', (req: FastifyRequest) => Promise<unknown>> {
  const { engine } = ctx;
  const store = engine.store;
  return {
    list: async () => ({ ok: true, value: listWebhooks(store).map((h) => viewWebhook(h)) }),
    add: async (req) => {
      if (req.body === null || typeof req.body !== 'object' || Array.isArray(req.body)) {
        throw new TendError('INVALID', 'the body must be a JSON object', [{ path: '', message: 'expected a JSON object' }]);
      }
      const h = addWebhook(store, req.body, engine.clock.now());
      engine.log({ type: 'webhook:added', routineId: h.routineId, message: `webhook ${h.id} added (${h.events.join(', ')})` });
      return { ok: true, value: viewWebhook(h) };
    },
    remove: async (req) => {
      const h = removeWebhook(store, parseWebhookId((req.params as { id: string }).id), engine.clock.now());
      engine.log({ type: 'webhook:removed', routineId: h.routineId, message: `webhook ${h.id} removed` });
      return { ok: true, value: viewWebhook(h) };
    },
    deliveries: async (req) => {
      const q = LogQuery.safeParse(req.query ?? {});
      if (!q.success) throw invalid(zodIssues(q.error));
      return { ok: true, value: deliveryLog(store, q.data.limit ?? 50) };
    },
  };
}
