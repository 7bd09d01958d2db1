// The page's CSP allows no inline style ('unsafe-inline' is gone): every page renders with
// nothing refused, the positioned parts (timeline bars, virtual rows, meters) included. A
// corrected #token= pasted into the same tab lets the page in without a reload.
import { expect, test, type Page } from '@playwright/test';
import { COMPUTER, startDaemon, type Daemon } from './daemon.js';
import { shoot } from './shots.js';

let d: Daemon;
let worker: { stop(): Promise<void> } | undefined;
const ok = `${COMPUTER}:csp/daily`;
const live = `${COMPUTER}:csp/ticker`;

test.beforeAll(async () => {
  d = await startDaemon();
  const daily = d.script('daily.sh', 'echo "rows: 1200"');
  const tick = d.script('ticker.sh', 'while true; do date +%T; sleep 1; done');
  await d.api('routines.create', { id: ok, name: 'Daily report', command: daily, cron: '0 6 * * *' });
  await d.api('routines.create', { id: live, name: 'Ticker', command: tick, realtime: true });
  await d.api('routines.run', { id: ok });
  worker = await d.worker('bob@render-farm', 4);
  await d.api('jobs.post', { name: 'transcode', command: 'true' });
  await expect.poll(async () => (await d.api('routines.show', { id: ok })).today, { timeout: 20_000 }).toBe('COMPLETED');
});
test.afterAll(async () => {
  await worker?.stop();
  await d?.stop();
});

/** Every CSP violation the page reports, from before its first script runs. */
async function recordViolations(page: Page): Promise<() => Promise<string[]>> {
  await page.addInitScript(`
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + e.sample));
  `);
  const console: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) console.push(m.text());
  });
  return async () => [...((await page.evaluate('window.__csp')) as string[]), ...console];
}

test('the CSP has no unsafe-inline, and no page has anything refused by it', async ({ page }) => {
  const res = await page.request.get(`${d.url}/`);
  const csp = res.headers()['content-security-policy'] ?? '';
  expect(csp).toContain("style-src 'self'");
  expect(csp).not.toContain('unsafe-inline');
  expect(await res.text()).not.toContain('unsafe-inline');

  const violations = await recordViolations(page);
  await d.open(page, '/today');
  await expect(page.locator('.vrow').first()).toBeVisible();
  for (const route of ['/today', '/timeline', '/jobs', '/workers', '/health', `/routine/${encodeURIComponent(ok)}`]) {
    await page.goto(`${d.url}/#${route}`);
    // The page has drawn (its event stream keeps the network busy: no networkidle here).
    await expect(page.locator('#root h1, #root h2').first()).toBeVisible();
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    expect(await violations(), route).toEqual([]);
  }
  // The positioned parts took their geometry (set through the CSSOM, which the CSP allows).
  await page.goto(`${d.url}/#/timeline`);
  const bar = page.locator(`.gantt-lane[data-routine="${ok}"] .gantt-bar`).first();
  await expect(bar).toBeVisible();
  expect((await bar.boundingBox())!.width).toBeGreaterThanOrEqual(4);
  await shoot(page, 'csp-timeline');
  await page.goto(`${d.url}/#/workers`);
  await expect(page.locator('.meter-fill').first()).toBeAttached();
  await shoot(page, 'csp-workers');
  await page.goto(`${d.url}/#/today`);
  const rows = page.locator('.vrow');
  await expect(rows.nth(1)).toBeVisible();
  const [a, b] = [await rows.nth(0).boundingBox(), await rows.nth(1).boundingBox()];
  expect(b!.y).toBeGreaterThan(a!.y);
  await shoot(page, 'csp-today');
  expect(await violations()).toEqual([]);
});

test('a wrong token is refused; the corrected #token= pasted in the same tab lets the page in, without a reload', async ({ page }) => {
  await page.goto(`${d.url}/#token=not-the-token`);
  await expect(page.getByText("The daemon refused this page's token")).toBeVisible();
  await expect(page.getByText('Could not load routines')).toBeVisible();
  // Nothing was loaded: the page does not claim there are no routines.
  await expect(page.getByText('No routines yet')).toHaveCount(0);
  await shoot(page, 'token-refused');
  await page.evaluate('window.__sameDocument = true');
  await page.evaluate(`location.hash = '#token=${d.token}'`);
  await expect(page.getByText("The daemon refused this page's token")).toHaveCount(0);
  await expect(page.getByText('Daily report').first()).toBeVisible();
  expect(await page.evaluate('window.__sameDocument')).toBe(true);
  // The token left the address bar.
  expect(page.url()).not.toContain('token=');
});
