// Today with 5,000 routines: the first rows show quickly, only the visible rows are in the DOM,
// and the last routine is one scroll away.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { startDaemon, type Daemon } from './daemon.js';

const N = 5000;
let d: Daemon;
test.beforeAll(async () => {
  d = await startDaemon();
  // Addressed to a computer this daemon does not run: they are listed, never started.
  const routines = Array.from({ length: N }, (_, i) => ({ id: `bench@farm:bulk/r${String(i).padStart(4, '0')}`, name: `bulk ${String(i).padStart(4, '0')}`, command: 'true', cron: `${i % 60} ${i % 24} * * *`, tz: 'UTC' }));
  const file = join(d.work, 'bulk.json');
  writeFileSync(file, JSON.stringify({ schedule: 'bulk', routines }));
  const r = await d.cli(['schedule', 'import', file]);
  expect(r.code, r.stderr).toBe(0);
});
test.afterAll(async () => {
  await d?.stop();
});

test('Today renders 5,000 routines virtualised: quick first rows, a few dozen DOM rows, smooth to the end', async ({ page }) => {
  const t0 = Date.now();
  await d.open(page);
  await expect(page.locator('.routine-row').first()).toBeVisible();
  const firstRows = Date.now() - t0;
  await expect(page.locator('.page-sub')).toContainText(`${N} routines`);
  const inDom = await page.locator('.routine-row').count();
  expect(inDom).toBeLessThan(80);
  console.log(`Today with ${N} routines: first rows after ${firstRows} ms`);
  test.info().annotations.push({ type: 'first rows', description: `${firstRows} ms (page load, ${N} summaries over HTTP, render)` });
  // The bench measures how fast (bench/ui.ts); this test checks virtualisation: the DOM count.

  await page.evaluate("document.querySelector('[data-testid=today-scroller]').scrollTop = 1e9");
  await expect(page.locator('.routine-row[data-routine="bench@farm:bulk/r4999"]')).toBeVisible();
  expect(await page.locator('.routine-row').count()).toBeLessThan(80);

  await page.getByRole('searchbox', { name: 'Search' }).fill('r4321');
  await expect(page.locator('.routine-row')).toHaveCount(1);
});
