// Today's action feedback ("Started" and the run's status) fits in its row at a 1280 px wide
// window: it was clipped at the row's right edge.
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { COMPUTER, startDaemon, type Daemon } from './daemon.js';
import { shoot } from './shots.js';

let d: Daemon;
test.beforeAll(async () => {
  d = await startDaemon();
});
test.afterAll(async () => {
  await d?.stop();
});

test.use({ viewport: { width: 1280, height: 800 } });

test('at 1280 px the feedback of Restart ("Started" and the run status) lies inside its row and the window', async ({ page }) => {
  const gate = join(d.work, 'gate');
  const id = `${COMPUTER}:reports/nightly-warehouse-export`;
  await d.api('routines.create', { id, name: 'Nightly warehouse export', command: d.script('slow.sh', `while [ ! -f ${gate} ]; do sleep 0.05; done`), cron: '0 6 * * *' });
  await d.open(page);
  const row = page.locator(`.routine-row[data-routine="${id}"]`);
  await row.getByRole('button', { name: /^Restart/ }).click();
  const result = row.locator('.action-result');
  await expect(result).toContainText('Started');
  await expect(result.locator('.chip')).toHaveText('RUNNING');

  const box = (await result.boundingBox())!;
  const chip = (await result.locator('.chip').boundingBox())!;
  const rowBox = (await row.boundingBox())!;
  const table = (await page.locator('.today-table').boundingBox())!;
  const right = Math.min(rowBox.x + rowBox.width, table.x + table.width, 1280);
  expect(box.x + box.width, 'the message ends inside the row').toBeLessThanOrEqual(right);
  expect(chip.x + chip.width, 'the status chip ends inside the row').toBeLessThanOrEqual(right);
  // Nothing of it is cut by its own box either: the text is shown whole.
  expect(await result.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
  // The table fits the window: no column is cut off at the right.
  expect(await page.locator('.today-table').evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
  await shoot(page, 'today-feedback-1280');
  writeFileSync(gate, '');
});
