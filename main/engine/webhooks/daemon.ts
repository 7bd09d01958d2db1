// Started by the process that owns the data dir (`tend daemon run`): delivery follows the engine.
import type { Engine } from '../engine.js';
import { WebhookDispatcher, type WebhookOptions } from './dispatcher.js';

/** `options`: Settings.webhooks (TEND_WEBHOOK_*, named at start when bad). */
export function startWebhookDelivery(engine: Engine, options: WebhookOptions): WebhookDispatcher {
  const d = new WebhookDispatcher({ store: engine.store, now: () => engine.clock.now(), log: (e) => engine.log(e), bus: engine.bus }, options);
  d.start();
  return d;
}
