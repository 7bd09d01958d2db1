// Started by the process that owns the data dir (`tend daemon run`): delivery follows the engine.
import type { Engine } from '../engine.js';
import { WebhookDispatcher, webhookOptionsFromEnv } from './dispatcher.js';

export function startWebhookDelivery(engine: Engine, report: (line: string) => void, env: NodeJS.ProcessEnv = process.env): WebhookDispatcher {
  const { options, problems } = webhookOptionsFromEnv(env);
  for (const p of problems) report(`tend daemon: ${p}`);
  const d = new WebhookDispatcher({ store: engine.store, now: () => engine.clock.now(), log: (e) => engine.log(e), bus: engine.bus }, options);
  d.start();
  return d;
}
