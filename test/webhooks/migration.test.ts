// Migration 2 (webhooks), on :memory: and as an upgrade of a version-1 file that already has
// events: the tables appear, and the events cursor starts at the newest event, so that history is
// never turned into notices.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDb } from '../../main/engine/store/db.js';
import { MIGRATIONS } from '../../main/engine/store/migrations.js';
import { Store } from '../../main/engine/store/store.js';
import { WebhookDispatcher } from '../../main/engine/webhooks/dispatcher.js';
import { addWebhook } from '../../main/engine/webhooks/ops.js';
import { hasWebhookTables, WebhookStore } from '../../main/engine/webhooks/store.js';

let dir: string | null = null;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

const tables = (s: Store) => s.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'webhook%' ORDER BY name`).pluck().all();

describe('migration 2: webhooks', () => {
  it('is version 2 and brings :memory: the webhook tables with a cursor at 0', () => {
    expect(MIGRATIONS.find((m) => m.version === 2)?.description).toMatch(/^webhooks:/);
    const s = Store.open(':memory:');
    try {
      expect(tables(s)).toEqual(['webhook_deliveries', 'webhook_trouble', 'webhooks']);
      expect(hasWebhookTables(s.db)).toBe(true);
      expect(new WebhookStore(s.db).cursor()).toBe(0);
    } finally {
      s.close();
    }
  });

  it('upgrading a version-1 database that has events starts the cursor at its newest event: nothing old is sent', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tend-mig2-'));
    const path = join(dir, 'tend.db');
    // Written with version 1 only, in plain SQL (today's repositories expect today's schema).
    const v1 = openDb(path, { migrations: MIGRATIONS.filter((m) => m.version === 1) });
    expect(hasWebhookTables(v1)).toBe(false);
    v1.prepare(`INSERT INTO schedules (name, created_at) VALUES ('default', 0)`).run();
    v1.prepare(`INSERT INTO routines (id, schedule, name, computer, kind, def, seq, created_at, updated_at) VALUES ('me@box:x', 'default', 'x', 'me@box', 'batch', ?, 1, 0, 0)`).run(
      JSON.stringify({ id: 'me@box:x', name: 'x', schedule: 'default', computer: 'me@box', kind: 'batch', external: false, args: [], env: {} }),
    );
    let last = 0;
    for (let i = 0; i < 3; i++) {
      v1.prepare(`INSERT INTO runs (id, routine_id, kind, cycle, scheduled_at, status, created_at) VALUES (?, 'me@box:x', 'batch', '1970-01-01', 0, 'ERROR', 0)`).run(`old-${i}`);
      const info = v1.prepare(`INSERT INTO events (at, type, level, routine_id, run_id, message) VALUES (?, 'run:failed', 'error', 'me@box:x', ?, 'failed: exit 1')`).run(1000 + i, `old-${i}`);
      last = Number(info.lastInsertRowid);
    }
    v1.close();

    const s = Store.open(path);
    try {
      expect(tables(s)).toEqual(['webhook_deliveries', 'webhook_trouble', 'webhooks']);
      const wh = new WebhookStore(s.db);
      expect(wh.cursor()).toBe(last);
      addWebhook(s, { url: 'http://127.0.0.1:9/hook' }, 2000);
      const d = new WebhookDispatcher({ store: s, now: () => 3000, log: () => undefined });
      expect(d.scan()).toBe(0);
      expect(wh.counts().queued).toBe(0);
      expect(wh.cursor()).toBe(last);
      // Had the cursor started at 0, these failures would have been sent.
      wh.setCursor(0);
      expect(d.scan()).toBe(3);
    } finally {
      s.close();
    }
  });
});
