// Today: a failing routine shows ERROR; fixed and restarted with one click, it goes through
// RUNNING to COMPLETED in the same page, pushed by engine events (no reload).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

test('a failing routine shows ERROR; after fixing its script one Restart takes it through RUNNING to COMPLETED without a reload', async ({ page }) => {
  const script = d.script('nightly.sh', 'echo "fetching"\necho "upstream returned 500" >&2\nexit 1');
  const id = `${COMPUTER}:reports/nightly`;
  await d.api('routines.create', { id, name: 'Nightly report', command: script, in: '1s', retry: 'none' });
  await d.open(page);
  await page.evaluate('window.__sameDocument = true');

  const row = page.locator(`.routine-row[data-routine="${id}"]`);
  await expect(row.locator('.chip').first()).toHaveText('ERROR');
  await shoot(page, 'today-error');

  // Fix the script; the good run waits for a gate file so RUNNING is seen for sure.
  const gate = join(d.work, 'nightly.gate');
  d.script('nightly.sh', `echo "fetching"\nwhile [ ! -f ${gate} ]; do sleep 0.05; done\necho "report written"\nexit 0`);
  await row.getByRole('button', { name: /^Restart/ }).click();
  await expect(row.locator('.chip').first()).toHaveText('RUNNING');
  await expect(row.locator('.action-result')).toContainText('Started');
  writeFileSync(gate, '');
  await expect(row.locator('.chip').first()).toHaveText('COMPLETED');
  await expect(row.getByRole('cell').nth(4)).not.toHaveText('—');
  expect(await page.evaluate('window.__sameDocument')).toBe(true);

  const runs = (await d.api('routines.show', { id })).history;
  expect(runs.map((r) => r.status)).toEqual(['COMPLETED', 'ERROR']);
});

test('Today groups routines by name, marks observe-only schedules and filters by status, computer, schedule and text', async ({ page }) => {
  const ok = d.script('ok.sh', 'echo ok');
  for (const part of ['eu', 'us', 'asia']) await d.api('routines.create', { id: `${COMPUTER}:feeds/${part}`, name: 'Feed import', command: ok, cron: '0 5 * * *' });
  await d.api('routines.create', { id: `${COMPUTER}:watch/other`, schedule: 'lab', command: ok, cron: '0 6 * * *' });
  await d.api('schedules.setMode', { name: 'lab', mode: 'observe' });
  await d.api('routines.create', { id: `someone@elsewhere:remote/job`, command: ok, cron: '0 7 * * *' });
  await d.open(page);

  const group = page.locator('.group-row', { hasText: 'Feed import' });
  await expect(group).toContainText('3 routines');
  await expect(page.locator('.routine-row[data-routine$=":feeds/eu"]')).toHaveCount(0);
  await group.getByRole('button', { name: 'Feed import' }).click();
  await expect(group.getByRole('button', { name: 'Feed import' })).toHaveAttribute('aria-expanded', 'true');
  await expect(page.locator('.routine-row[data-routine$=":feeds/eu"]')).toBeVisible();

  const lab = page.locator('.schedule-row', { hasText: 'Schedule lab' });
  await expect(lab).toContainText('observe-only');
  await expect(page.locator(`.routine-row[data-routine="${COMPUTER}:watch/other"]`).getByRole('button', { name: /^Run now/ })).toBeDisabled();
  await shoot(page, 'today');

  await page.getByRole('combobox', { name: 'Status' }).selectOption('COMPLETED');
  await expect(page.locator('.routine-row')).toHaveCount(1);
  await expect(page.locator('.routine-row')).toContainText('Nightly report');
  await page.getByRole('button', { name: 'Clear filters' }).click();

  await page.getByRole('combobox', { name: 'Computer' }).selectOption('someone@elsewhere');
  await expect(page.locator('.routine-row')).toHaveCount(1);
  await expect(page.locator('.routine-row')).toContainText('remote/job');
  await page.getByRole('button', { name: 'Clear filters' }).click();

  await page.getByRole('combobox', { name: 'Schedule' }).selectOption('lab');
  await expect(page.locator('.routine-row')).toHaveCount(1);
  await page.getByRole('button', { name: 'Clear filters' }).click();

  await page.getByRole('searchbox', { name: 'Search' }).fill('feeds/as');
  await expect(page.locator('.routine-row')).toHaveCount(1);
  await expect(page.locator('.routine-row')).toContainText('feeds/asia');
});
