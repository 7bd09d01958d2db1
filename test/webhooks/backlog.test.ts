// A backlog of events no daemon has read yet (a data dir the CLI wrote to, or a long downtime):
// with no receiver it is skipped without being read; with one it is read a slice at a time, so
// passes and API calls go on in between, and every event is still read exactly once.
import { afterEach, describe, expect, it } from 'vitest';
import { WebhookDispatcher } from '../../main/engine/webhooks/dispatcher.js';
import { addWebhook } from '../../main/engine/webhooks/ops.js';
import { WebhookStore } from '../../main/engine/webhooks/store.js';
import { Fixture } from '../helpers/engine-fixture.js';
import { waitFor } from '../helpers/wait.js';

let f: Fixture;
let d: WebhookDispatcher | null = null;
afterEach(async () => {
  await d?.stop();
  f?.close();
});

function backlog(n: number): void {
  f.store.tx(() => {
    for (let i = 0; i < n; i++) f.store.events.append({ type: 'run:submitted', routineId: 'me@host:r', runId: `r${i}`, message: 'submitted' }, f.now());
  });
}

function counting(): { reads: number[] } {
  const seen = { reads: [] as number[] };
  const after = f.store.events.after.bind(f.store.events);
  f.store.events.after = (id: number, limit?: number) => {
    const rows = after(id, limit);
    seen.reads.push(rows.length);
    return rows;
  };
  return seen;
}

describe('an unread backlog of events', () => {
  it('with no receiver: skipped, none read', () => {
    f = new Fixture();
    backlog(3000);
    const seen = counting();
    d = new WebhookDispatcher({ store: f.store, now: () => f.now(), log: () => {} });
    d.scan();
    expect(seen.reads.reduce((a, b) => a + b, 0)).toBe(0);
    expect(new WebhookStore(f.store.db).cursor()).toBe(f.store.events.lastId());
  });

  it('with a receiver: read 2,000 events per turn of the event loop, all of them once', async () => {
    f = new Fixture();
    addWebhook(f.store, { url: 'http://127.0.0.1:9/hook' }, f.now());
    backlog(4500);
    const unread = f.store.events.lastId() - new WebhookStore(f.store.db).cursor();
    expect(unread).toBeGreaterThanOrEqual(4500);
    const seen = counting();
    d = new WebhookDispatcher({ store: f.store, now: () => f.now(), log: () => {} }, { pollMs: 60_000 });
    d.scan();
    expect(seen.reads.reduce((a, b) => a + b, 0)).toBe(2000);
    d.start();
    await waitFor(() => new WebhookStore(f.store.db).cursor() === f.store.events.lastId(), 10_000, 'the backlog to be read');
    expect(seen.reads.reduce((a, b) => a + b, 0)).toBe(unread);
  });
});
