// Everyone can use the pages: axe-core finds no serious or critical violation on any page, in
// light or in dark, with the pages showing real content (failures, running work, workers, jobs).
import { expect, test, type Page } from '@playwright/test';
import { COMPUTER, startDaemon, type Daemon } from './daemon.js';
import { describe, isSerious, violations } from './axe.js';
import { shoot } from './shots.js';

let d: Daemon;
let worker: { stop(): Promise<void> } | undefined;
const failing = `${COMPUTER}:backup/offsite`;
const good = `${COMPUTER}:reports/daily`;
const live = `${COMPUTER}:feeds/ticker`;

test.beforeAll(async () => {
  d = await startDaemon();
  const fail = d.script('offsite.sh', 'echo "rsync: connection refused" >&2\nexit 23');
  const ok = d.script('daily.sh', 'echo "rows: 1200"');
  const tick = d.script('ticker.sh', 'while true; do date +%T; sleep 1; done');
  await d.api('routines.create', { id: failing, name: 'Offsite backup', command: fail, in: '1s', retry: 'none' });
  await d.api('routines.create', { id: good, name: 'Daily report', command: ok, cron: '0 6 * * *' });
  await d.api('routines.create', { id: live, name: 'Ticker', command: tick, realtime: true });
  // A dependent: the Routine page lists it under Downstream (a status chip and a link).
  await d.api('routines.create', { id: `${COMPUTER}:backup/verify`, command: ok, cron: '0 7 * * *', after: [failing] });
  for (const part of ['eu', 'us']) await d.api('routines.create', { id: `${COMPUTER}:feeds/${part}`, name: 'Feed import', command: ok, cron: '0 5 * * *' });
  await d.api('routines.create', { id: `${COMPUTER}:watch/other`, schedule: 'lab', command: ok, cron: '0 6 * * *' });
  await d.api('schedules.setMode', { name: 'lab', mode: 'observe' });
  await d.api('routines.run', { id: good });
  worker = await d.worker('bob@render-farm', 4);
  const job = await d.api('jobs.post', { name: 'transcode', command: 'true' });
  await d.api('jobs.post', { name: 'publish', command: 'true', after: [job.id] });
  await d.api('jobs.post', { name: 'archive', command: 'false' });
  // Enough finished jobs for the jobs table to scroll with no Cancel button in it.
  for (let i = 0; i < 16; i++) await d.api('jobs.post', { name: `thumb-${i}`, command: 'true' });
  await expect.poll(async () => (await d.api('routines.show', { id: failing })).today, { timeout: 20_000 }).toBe('ERROR');
  await expect.poll(async () => (await d.api('routines.show', { id: good })).today, { timeout: 20_000 }).toBe('COMPLETED');
});
test.afterAll(async () => {
  await worker?.stop();
  await d?.stop();
});

test('today with no routines yet: no serious or critical axe violation in light or dark', async ({ page }) => {
  const empty = await startDaemon();
  try {
    await empty.open(page);
    await expect(page.getByText('No routines yet')).toBeVisible();
    const found: string[] = [];
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
      const vs = (await violations(page)).filter(isSerious);
      if (vs.length) found.push(`${scheme}:\n${describe(vs)}`);
    }
    await shoot(page, 'a11y-today-empty');
    expect(found.join('\n')).toBe('');
  } finally {
    await empty.stop();
  }
});

const pages: { name: string; route: string; ready: (p: Page) => Promise<void> }[] = [
  { name: 'today', route: '/today', ready: (p) => expect(p.locator(`.routine-row[data-routine="${failing}"]`)).toContainText('ERROR') },
  { name: 'timeline', route: '/timeline', ready: (p) => expect(p.locator(`.gantt-lane[data-routine="${failing}"] .gantt-bar.is-failed`)).toHaveCount(1) },
  {
    name: 'routine',
    route: `/routine/${encodeURIComponent(failing)}`,
    ready: async (p) => {
      await expect(p.locator('.run-details')).toContainText('exit 23');
      await expect(p.locator('.deps', { hasText: 'backup/verify' })).toBeVisible();
      await p.getByRole('tab', { name: 'stderr' }).click();
      await expect(p.getByTestId('log-body')).toContainText('connection refused');
    },
  },
  {
    name: 'jobs',
    route: '/jobs',
    ready: async (p) => {
      await expect(p.locator('.jobs-table .vrow[data-status="ERROR"]')).toHaveCount(1);
      await expect(p.locator('.jobs-table .vrow:not([data-status="COMPLETED"]):not([data-status="ERROR"])')).toHaveCount(0);
    },
  },
  { name: 'workers', route: '/workers', ready: (p) => expect(p.locator('tr[data-worker="bob@render-farm"]')).toContainText('online') },
  { name: 'health', route: '/health', ready: (p) => expect(p.locator('.finding[data-finding="routine-error"]')).toBeVisible() },
  { name: 'editor', route: `/edit/${encodeURIComponent(good)}`, ready: (p) => expect(p.getByRole('heading', { name: /Edit/ })).toBeVisible() },
];

for (const { name, route, ready } of pages) {
  test(`${name}: no serious or critical axe violation in light or dark`, async ({ page }) => {
    await d.open(page, route);
    await ready(page);
    const found: string[] = [];
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
      await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
      const all = await violations(page);
      const vs = all.filter(isSerious);
      if (vs.length) found.push(`${scheme}:\n${describe(vs)}`);
      // Moderate and minor findings are reported, not failed on.
      const rest = all.filter((v) => !isSerious(v));
      if (rest.length) test.info().annotations.push({ type: `axe ${scheme}`, description: describe(rest) });
    }
    await shoot(page, `a11y-${name}`);
    expect(found.join('\n'), `axe on ${name}`).toBe('');
  });
}
