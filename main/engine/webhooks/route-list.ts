// The webhook routes (handlers and schemas: webhooks/routes.ts), registered at start; what they
// run is loaded with the first request to one of them.
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../api/server.js';
import { onFirstCall } from '../api/lazy.js';

export function webhookRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const handlers = onFirstCall(async () => (await import('./routes.js')).webhookHandlers(ctx));
  app.get('/api/webhooks', async (req) => (await handlers()).list(req));
  app.post('/api/webhooks', async (req) => (await handlers()).add(req));
  app.delete('/api/webhooks/:id', async (req) => (await handlers()).remove(req));
  app.get('/api/webhooks/deliveries', async (req) => (await handlers()).deliveries(req));
}
