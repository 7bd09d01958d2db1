// Routine page: a realtime routine is stopped and started from its page, and its live log shows
// new lines as they are written.
import { expect, test, type Locator } from '@playwright/test';
import { COMPUTER, startDaemon, type Daemon } from './daemon.js';
import { shoot } from './shots.js';

let d: Daemon;
test.beforeAll(async () => {
  d = await startDaemon();
});
test.afterAll(async () => {
  await d?.stop();
});

/** The highest "tick N" in the log, or 0. */
async function lastTick(log: Locator): Promise<number> {
  const text = (await log.textContent()) ?? '';
  return Math.max(0, ...[...text.matchAll(/tick (\d+)/g)].map((m) => Number(m[1])));
}

test('a realtime routine is stopped and started from its page and its live log shows new lines as they are written', async ({ page }) => {
  const script = d.script('collector.sh', 'i=0\necho "collector $$ starting"\nwhile true; do i=$((i+1)); echo "tick $i"; sleep 0.3; done');
  const id = `${COMPUTER}:feeds/collector`;
  await d.api('routines.create', { id, name: 'Feed collector', command: script, realtime: true, env: { API_TOKEN: 'hunter2-secret' }, args: ['--password=hunter2'] });
  await d.open(page, `/routine/${encodeURIComponent(id)}`);

  const header = page.locator('.page-header');
  await expect(header.locator('.chip').first()).toHaveText('RUNNING');
  // Secrets are masked by the engine before they reach the page.
  await expect(page.locator('.props').first()).toContainText('API_TOKEN=***');
  await expect(page.locator('.props').first()).toContainText('--password=***');
  await expect(page.locator('body')).not.toContainText('hunter2');

  const log = page.getByTestId('log-body');
  await expect.poll(() => lastTick(log)).toBeGreaterThan(2);
  const seen = await lastTick(log);
  await expect.poll(() => lastTick(log)).toBeGreaterThan(seen + 2);
  await expect(page.locator('.log-state')).toContainText('Following');
  await shoot(page, 'routine-realtime');

  await header.getByRole('button', { name: /^Stop/ }).click();
  await expect(header.locator('.chip').first()).toHaveText('STOPPED');
  await expect(page.locator('.log-state')).toContainText('Ended');
  const firstRun = (await d.api('routines.show', { id })).history[0]!;
  expect(firstRun.status).toBe('STOPPED');
  // Stopped by hand stays stopped: the engine does not bring it back by itself.
  await expect(header.getByRole('button', { name: /^Start/ })).toBeEnabled();

  await header.getByRole('button', { name: /^Start/ }).click();
  await expect(header.locator('.chip').first()).toHaveText('RUNNING');
  await expect.poll(async () => (await d.api('routines.show', { id })).history[0]!.id).not.toBe(firstRun.id);
  const second = (await d.api('routines.show', { id })).history[0]!;
  // The log follows the new instance: its own start line, then ticks counting up as written.
  await expect(page.locator('.section', { hasText: 'Log ·' }).locator('h2')).toContainText(second.id);
  await expect(log).toContainText('starting');
  await expect.poll(() => lastTick(log)).toBeGreaterThan(1);
  const now = await lastTick(log);
  await expect.poll(() => lastTick(log)).toBeGreaterThan(now + 2);

  // The history shows both instances; the older one can be picked to see its manifest.
  await expect(page.locator('.history tbody tr')).toHaveCount(2);
  await page.getByRole('button', { name: `Show run ${firstRun.id}` }).click();
  await expect(page.locator('.manifest')).toContainText(`"runId": "${firstRun.id}"`);
  await expect(page.locator('.run-details')).toContainText('stopped by hand');
});

test('a batch routine page shows its definition, trigger and next runs, and upstream/downstream dependencies', async ({ page }) => {
  const ok = d.script('ok.sh', 'echo ok');
  const up = `${COMPUTER}:etl/extract`;
  const down = `${COMPUTER}:etl/load`;
  await d.api('routines.create', { id: up, command: ok, runtimes: ['06:00', '18:00'], tz: 'Europe/Berlin' });
  await d.api('routines.create', { id: down, command: ok, runtimes: ['06:00', '18:00'], tz: 'Europe/Berlin', after: [up] });
  await d.open(page, `/routine/${encodeURIComponent(up)}`);
  await expect(page.locator('.props').first()).toContainText('Daily at 06:00, 18:00 (Europe/Berlin)');
  await expect(page.getByRole('list', { name: 'Next runs' }).getByRole('listitem')).toHaveCount(5);
  await expect(page.locator('.deps', { hasText: 'Downstream' })).toContainText('etl/load');
  await page.locator('.deps', { hasText: 'Downstream' }).getByRole('link', { name: 'etl/load' }).click();
  await expect(page.locator('.deps', { hasText: 'Upstream' })).toContainText('etl/extract');
  await shoot(page, 'routine-batch');
});
