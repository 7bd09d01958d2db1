// The worker routes (handlers and schemas: pool/routes.ts), registered at start; what they run is
// loaded with the first worker request.
import type { FastifyInstance } from 'fastify';
import { WORKER_PATHS } from '../../../contract/worker-paths.js';
import type { ApiContext } from '../api/server.js';
import { onFirstCall } from '../api/lazy.js';

export function poolRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { engine } = ctx;
  const worker = { scope: 'worker' as const };
  // Closing waits for open requests: long polls must not hold a stopping daemon for their full wait.
  // Commands queued by another process (the CLI cancelling a job) reach a waiting worker with the
  // pass that process asks the daemon for, not when the long poll runs out.
  engine.bus.on('pass', () => {
    for (const computer of engine.store.pool.queuedComputers()) engine.wake.commandsFor(computer);
  });
  app.addHook('preClose', async () => engine.wake.close());
  const handlers = onFirstCall(async () => (await import('./routes.js')).poolHandlers(ctx));
  app.get(WORKER_PATHS.commands, { config: worker }, async (req, reply) => (await handlers()).commands(req, reply));
  app.post(WORKER_PATHS.claim, { config: worker }, async (req, reply) => (await handlers()).claim(req, reply));
  app.post(WORKER_PATHS.reports, { config: worker }, async (req, reply) => (await handlers()).reports(req, reply));
  app.post(WORKER_PATHS.external, { config: worker }, async (req, reply) => (await handlers()).external(req, reply));
}
