// Batch jobs: a job posted from the UI with a dependency waits, then runs after it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { startDaemon, type Daemon } from './daemon.js';
import { shoot } from './shots.js';

let d: Daemon;
test.beforeAll(async () => {
  d = await startDaemon();
});
test.afterAll(async () => {
  await d?.stop();
});

test('a batch job posted from the UI with a dependency waits, then runs after it', async ({ page }) => {
  // The first job holds until the test opens its gate: WAITING is seen for sure.
  const gate = join(d.work, 'download.gate');
  const slow = d.script('download.sh', `echo downloading\nwhile [ ! -f ${gate} ]; do sleep 0.05; done\necho done`);
  const after = d.script('parse.sh', 'echo parsed');
  await d.open(page, '/jobs');
  const form = page.locator('form.post-job');

  await form.getByLabel('Command').fill(slow);
  await form.getByLabel('Name').fill('download');
  await form.getByRole('button', { name: 'Post job' }).click();
  await expect(form.getByRole('status')).toContainText(/Posted job #\d+/);
  const first = Number(/#(\d+)/.exec((await form.getByRole('status').textContent()) ?? '')![1]);

  await form.getByLabel('Command').fill(after);
  await form.getByLabel('Arguments').fill('--input "today file.csv"');
  await form.getByLabel('After jobs').fill(String(first));
  await form.getByLabel('Name').fill('parse');
  await form.getByRole('button', { name: 'Post job' }).click();
  await expect(form.getByRole('status')).toContainText(`Posted job #${first + 1} (WAITING)`);
  const second = first + 1;

  const row = (id: number) => page.locator(`.jobs-table [data-job="${id}"]`);
  await expect(row(first).locator('.chip')).toHaveText('RUNNING');
  await expect(row(second).locator('.chip')).toHaveText('WAITING');
  await expect(page.locator(`.graph [data-job="${second}"]`)).toContainText('WAITING');
  await expect(page.locator('.graph .graph-edge')).toHaveCount(1);
  await shoot(page, 'jobs');
  writeFileSync(gate, '');

  await expect(row(first).locator('.chip')).toHaveText('COMPLETED');
  await expect(row(second).locator('.chip')).toHaveText('COMPLETED');
  const [a, b] = [await d.api('jobs.show', { id: first }), await d.api('jobs.show', { id: second })];
  expect(b.args).toEqual(['--input', 'today file.csv']);
  expect(b.startedAt!).toBeGreaterThanOrEqual(a.endedAt!);
});

test('a job can be cancelled from the list, and a bad dependency is refused on its field', async ({ page }) => {
  await d.open(page, '/jobs');
  const form = page.locator('form.post-job');
  await form.getByLabel('Command').fill(d.script('hang.sh', 'sleep 60'));
  await form.getByRole('button', { name: 'Post job' }).click();
  const id = Number(/#(\d+)/.exec((await form.getByRole('status').textContent()) ?? '')![1]);
  const row = page.locator(`.jobs-table [data-job="${id}"]`);
  await expect(row.locator('.chip')).toHaveText('RUNNING');
  await row.getByRole('button', { name: `Cancel job ${id}` }).click();
  await expect(row.locator('.chip')).toHaveText('CANCEL');

  await form.getByLabel('Command').fill('true');
  await form.getByLabel('After jobs').fill('9999');
  await form.getByRole('button', { name: 'Post job' }).click();
  await expect(form.locator('.field', { hasText: 'After jobs' }).locator('.field-error')).toHaveText('unknown job 9999');

  await page.getByRole('combobox', { name: 'Status' }).selectOption('CANCEL');
  await expect(page.locator('.jobs-table .vrow')).toHaveCount(1);
});
