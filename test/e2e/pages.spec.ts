// Timeline, Health and Workers render what the engine knows today; every page is captured in
// light and dark; the theme switch and keyboard navigation work.
import { expect, test } from '@playwright/test';
import { COMPUTER, startDaemon, type Daemon } from './daemon.js';
import { shoot } from './shots.js';

let d: Daemon;
let worker: { stop(): Promise<void> } | undefined;
const failing = `${COMPUTER}:backup/offsite`;
const good = `${COMPUTER}:reports/daily`;
const live = `${COMPUTER}:feeds/ticker`;

test.beforeAll(async () => {
  d = await startDaemon();
  const fail = d.script('offsite.sh', 'echo "rsync: connection refused" >&2\nexit 23');
  const ok = d.script('daily.sh', 'echo "rows: 1200"\nsleep 0.5');
  const tick = d.script('ticker.sh', 'while true; do date +%T; sleep 1; done');
  await d.api('routines.create', { id: failing, name: 'Offsite backup', command: fail, in: '1s', retry: 'none' });
  await d.api('routines.create', { id: good, name: 'Daily report', command: ok, cron: '0 6 * * *' });
  await d.api('routines.create', { id: live, name: 'Ticker', command: tick, realtime: true });
  await d.api('routines.run', { id: good });
  worker = await d.worker('bob@render-farm', 4);
  const job = await d.api('jobs.post', { name: 'transcode', command: 'true' });
  await d.api('jobs.post', { name: 'publish', command: 'true', after: [job.id] });
  await expect.poll(async () => (await d.api('routines.show', { id: failing })).today, { timeout: 20_000 }).toBe('ERROR');
  await expect.poll(async () => (await d.api('routines.show', { id: good })).today, { timeout: 20_000 }).toBe('COMPLETED');
});
test.afterAll(async () => {
  await worker?.stop();
  await d?.stop();
});

test('the Timeline draws today’s runs per routine with a now-line and failed runs marked, with details on hover', async ({ page }) => {
  await d.open(page, '/timeline');
  const lane = (id: string) => page.locator(`.gantt-lane[data-routine="${id}"]`);
  await expect(lane(failing).locator('.gantt-bar.is-failed')).toHaveCount(1);
  await expect(lane(failing)).toContainText('1 failed');
  await expect(lane(good).locator('.gantt-bar[data-status="COMPLETED"]')).toHaveCount(1);
  await expect(lane(live).locator('.gantt-bar.is-open')).toHaveCount(1);
  await expect(page.getByTestId('now-line')).toBeVisible();
  await lane(failing).locator('.gantt-bar').hover();
  await expect(page.getByRole('tooltip')).toContainText('Exit 23');
  await shoot(page, 'timeline');
  await page.getByRole('button', { name: 'Whole day' }).click();
  // Three-hourly ticks over the whole day; the one nearest now gives way to the "now" label.
  await expect
    .poll(async () => {
      const labels = await page.locator('.gantt-tick').allTextContents();
      return labels.length >= 7 && labels.every((l) => /^(00|03|06|09|12|15|18|21):00$/.test(l));
    })
    .toBe(true);
});

test('Health shows the daemon’s status and the doctor’s findings with their actions', async ({ page }) => {
  await d.open(page, '/health');
  await expect(page.getByRole('status').filter({ hasText: 'Scheduler healthy' })).toBeVisible();
  const finding = page.locator('.finding[data-finding="routine-error"]');
  await expect(finding).toContainText(`${failing} is in ERROR`);
  await expect(finding).toContainText(`tend routine restart ${failing}`);
  await expect(finding.getByRole('button', { name: /^Restart/ })).toBeVisible();
  await expect(page.locator('.section', { hasText: 'Recent failures' })).toContainText('backup/offsite');
  await expect(page.locator('.events')).toContainText('run:failed');
  // The retention: 30 days unless TEND_KEEP_DAYS says otherwise; a fresh daemon has nothing to remove.
  await expect(page.locator('.section', { hasText: 'Daemon' })).toContainText(/kept 30 days · last cleaned .*, nothing to remove/);
  await shoot(page, 'health');
});

test('Workers lists hosts with last seen, version, slots and running jobs', async ({ page }) => {
  await d.open(page, '/workers');
  const row = page.locator('tr[data-worker="bob@render-farm"]');
  await expect(row).toContainText('online');
  await expect(row).toContainText('0.1.0');
  await expect(row.locator('td').nth(4)).toHaveText('4');
  await expect(row.getByRole('button', { name: /Forget/ })).toHaveCount(0); // online: nothing to forget
  await shoot(page, 'workers');
});

test('a worker host never seen can be forgotten in two clicks, and its row goes', async ({ page }) => {
  const issued = await d.cli(['worker', 'token', 'bob@old-laptop']);
  expect(issued.code).toBe(0);
  await d.open(page, '/workers');
  const row = page.locator('tr[data-worker="bob@old-laptop"]');
  await expect(row).toContainText('not seen');
  await row.getByRole('button', { name: 'Forget bob@old-laptop' }).click();
  await expect(row.getByRole('group', { name: 'Forget bob@old-laptop?' })).toBeVisible();
  await shoot(page, 'workers-forget-confirm');
  await row.getByRole('button', { name: 'Forget bob@old-laptop' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Forgot bob@old-laptop' })).toBeVisible();
  await expect(row).toHaveCount(0);
  await expect(page.locator('tr[data-worker="bob@render-farm"]')).toBeVisible();
  expect((await d.api('workers.list', {})).map((w: { computer: string }) => w.computer)).not.toContain('bob@old-laptop');
});

test('every page in light and dark; the theme switch overrides the system preference', async ({ page }) => {
  await d.open(page);
  await expect(page.locator(`.routine-row[data-routine="${failing}"]`)).toContainText('ERROR');
  await shoot(page, 'today-mixed');
  await page.goto(`${d.url}/#/routine/${encodeURIComponent(failing)}`);
  await expect(page.locator('.run-details')).toContainText('exit 23');
  await expect(page.getByTestId('log-body')).toBeVisible();
  await page.getByRole('tab', { name: 'stderr' }).click();
  await expect(page.getByTestId('log-body')).toContainText('connection refused');
  await shoot(page, 'routine-error');
  await page.goto(`${d.url}/#/jobs`);
  await expect(page.locator('.jobs-table .vrow[data-status="COMPLETED"]')).toHaveCount(2);
  await shoot(page, 'jobs-done');
  await page.goto(`${d.url}/#/new`);
  await expect(page.getByRole('heading', { name: 'New routine' })).toBeVisible();
  await shoot(page, 'editor-new');

  await page.emulateMedia({ colorScheme: 'light' });
  const html = page.locator('html');
  await expect(html).toHaveAttribute('data-theme', 'system');
  await page.getByRole('button', { name: /^Theme: system/ }).click();
  await expect(html).toHaveAttribute('data-theme', 'light');
  await page.getByRole('button', { name: /^Theme: light/ }).click();
  await expect(html).toHaveAttribute('data-theme', 'dark');
  const bg = await page.evaluate('getComputedStyle(document.body).backgroundColor');
  expect(bg).toBe('rgb(13, 17, 23)');
  await page.reload();
  await expect(html).toHaveAttribute('data-theme', 'dark');
});

test('the pages are reachable by keyboard, with visible focus', async ({ page }) => {
  await d.open(page);
  await expect(page.locator('.routine-row').first()).toBeVisible();
  await page.keyboard.press('Tab'); // skip link
  await expect(page.getByRole('link', { name: 'Skip to content' })).toBeFocused();
  await page.keyboard.press('Tab');
  await expect(page.getByRole('link', { name: 'Today' })).toBeFocused();
  await page.keyboard.press('Tab');
  await expect(page.getByRole('link', { name: 'Timeline' })).toBeFocused();
  // Keyboard focus is visible: a solid outline in the focus colour.
  expect(await page.evaluate('getComputedStyle(document.activeElement).outlineStyle')).toBe('solid');
  await page.keyboard.press('Enter');
  await expect(page.getByRole('heading', { name: 'Timeline' })).toBeVisible();
  // The new page's heading takes focus, so the next Tab continues from the page, not the top.
  await expect(page.getByRole('heading', { name: 'Timeline' })).toBeFocused();
});
