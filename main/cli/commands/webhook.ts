import type { Command } from 'commander';
import { action, asFlags, print, table, usage, withStore } from '../io.js';

export function register(program: Command): void {
  const webhook = program
    .command('webhook')
    .description('POST a JSON payload to URLs when a run enters ERROR or DELAYED, a realtime routine restarts, or a routine recovers (docs/webhooks.md)');

  webhook
    .command('add <url>')
    .description('add a receiver for every routine, or one with --routine; the daemon delivers, with retries')
    .option('--routine <id>', 'only this routine')
    .option('--events <list>', 'comma separated: error, delayed, restart, recover (default: all)')
    .option('--secret <secret>', 'sign each body: X-Tend-Signature: sha256=HMAC-SHA256(secret, body)')
    .option('--json', 'machine-readable output')
    .action(
      action(async (url: string, o: { routine?: string; events?: string; secret?: string; json?: boolean }) => {
        const { addWebhook, viewWebhook } = await import('../../engine/webhooks/ops.js');
        const h = await withStore((s) =>
          asFlags({ url: 'url', routine: '--routine', events: '--events', secret: '--secret' }, () =>
            addWebhook(s, { url, routine: o.routine, events: o.events, secret: o.secret }, Date.now()),
          ),
        );
        const v = viewWebhook(h, true);
        print(o.json, v, () => `webhook ${v.id}: ${v.events.join(', ')} of ${v.routineId ?? 'every routine'} → ${v.url}${v.signed ? ' (signed)' : ''}`);
      }),
    );

  webhook
    .command('list')
    .description('the receivers (URLs redacted unless --show-urls)')
    .option('--show-urls', 'print whole URLs (they often hold a secret)')
    .option('--json', 'machine-readable output')
    .action(
      action(async (o: { showUrls?: boolean; json?: boolean }) => {
        const { listWebhooks, viewWebhook } = await import('../../engine/webhooks/ops.js');
        const hooks = (await withStore((s) => listWebhooks(s))).map((h) => viewWebhook(h, !!o.showUrls));
        print(o.json, hooks, () =>
          hooks.length ? table([['ID', 'ROUTINE', 'EVENTS', 'SIGNED', 'URL'], ...hooks.map((h) => [String(h.id), h.routineId ?? '(all)', h.events.join(','), h.signed ? 'yes' : 'no', h.url])]) : 'no webhooks (tend webhook add URL)',
        );
      }),
    );

  webhook
    .command('remove <id>')
    .description('remove a receiver; deliveries still queued for it are dropped')
    .option('--json', 'machine-readable output')
    .action(
      action(async (raw: string, o: { json?: boolean }) => {
        const { parseWebhookId, removeWebhook, viewWebhook } = await import('../../engine/webhooks/ops.js');
        const id = parseWebhookId(raw);
        const h = await withStore((s) => removeWebhook(s, id, Date.now()));
        print(o.json, { removed: viewWebhook(h) }, () => `webhook ${h.id} removed`);
      }),
    );

  webhook
    .command('deliveries')
    .description('the delivery log, newest first (also in `tend daemon status` and GET /api/webhooks/deliveries)')
    .option('--limit <n>', 'how many', '20')
    .option('--json', 'machine-readable output')
    .action(
      action(async (o: { limit: string; json?: boolean }) => {
        const limit = Number(o.limit);
        if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) usage('--limit', `a number from 1 to 1000, got "${o.limit}"`);
        const { deliveryLog } = await import('../../engine/webhooks/ops.js');
        const log = await withStore((s) => deliveryLog(s, limit));
        print(o.json, log, () => {
          const c = log.counts;
          const head = `${c.queued} queued, ${c.delivered} delivered, ${c.failed} failed, ${c.dropped} dropped`;
          if (!log.deliveries.length) return `${head}\nno deliveries yet`;
          return `${head}\n${table([
            ['ID', 'UPDATED', 'EVENT', 'ROUTINE', 'STATE', 'ATTEMPTS', 'URL', 'DETAIL'],
            ...log.deliveries.map((d) => [String(d.id), d.updatedAt, d.event, d.routineId ?? '-', d.state, String(d.attempts), d.url, d.error ?? (d.statusCode !== null ? `HTTP ${d.statusCode}` : '')]),
          ])}`;
        });
      }),
    );

  webhook
    .command('test <id>')
    .description('POST a test payload to one receiver now (not queued, not retried) and print the answer')
    .option('--json', 'machine-readable output')
    .action(
      action(async (raw: string, o: { json?: boolean }) => {
        const { parseWebhookId } = await import('../../engine/webhooks/ops.js');
        const { sendTest } = await import('../../engine/webhooks/test-send.js');
        const id = parseWebhookId(raw);
        const r = await withStore((s) => sendTest(s, id, Date.now()));
        print(o.json, r, () => (r.ok ? `webhook ${id}: HTTP ${r.status}` : `webhook ${id}: ${r.status !== null ? `HTTP ${r.status}` : r.error}`));
        if (!r.ok) process.exitCode = 1;
      }),
    );
}
