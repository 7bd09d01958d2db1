// Editor: the shared schemas decide; their messages land on the fields they name, and a
// refused routine is not stored.
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

test('the editor refuses a bad cron expression with the field’s message and stores nothing', async ({ page }) => {
  const id = `${COMPUTER}:reports/bad-cron`;
  await d.open(page, '/new');
  const form = page.getByRole('form', { name: 'New routine' });
  await form.getByLabel('Id').fill(id);
  await form.getByLabel('Command').fill('/bin/true');
  await form.getByRole('radio', { name: 'Cron' }).check();
  const cron = form.getByRole('textbox', { name: 'Cron' });
  await cron.fill('99 * * * *');
  await form.getByRole('button', { name: 'Create routine' }).click();

  const field = page.locator('.field').filter({ has: page.getByRole('textbox', { name: 'Cron' }) });
  await expect(field.locator('.field-error')).toHaveText('minute: 99 is out of range 0-59');
  await expect(cron).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByRole('alert').first()).toBeVisible();
  await shoot(page, 'editor-invalid');
  expect((await d.api('routines.list', {})).map((r) => r.id)).not.toContain(id);
  expect((await d.apiResult('routines.show', { id })).ok).toBe(false);

  // Fixed, it previews the next 5 runs from the engine and saves.
  await cron.fill('*/15 * * * *');
  await expect(page.getByRole('list', { name: 'Next runs preview' }).getByRole('listitem')).toHaveCount(5);
  await expect(field.locator('.field-error')).toHaveCount(0);
  await form.getByRole('button', { name: 'Create routine' }).click();
  await expect(page).toHaveURL(new RegExp(`#/routine/${encodeURIComponent(id)}$`));
  await expect(page.locator('.props').first()).toContainText('Cron */15 * * * *');
  expect((await d.api('routines.show', { id })).definition.timing).toEqual({ mode: 'cron', cron: '*/15 * * * *' });
});

test('every timing mode previews through the engine, and editing changes only what changed', async ({ page }) => {
  const id = `${COMPUTER}:sync/photos`;
  await d.api('routines.create', { id, command: '/bin/true', every: '30m', env: { DB_PASSWORD: 's3cret' } });
  await d.open(page, `/edit/${encodeURIComponent(id)}`);
  const form = page.getByRole('form', { name: 'Edit routine' });
  const preview = page.getByRole('list', { name: 'Next runs preview' }).getByRole('listitem');
  await expect(form.getByRole('textbox', { name: 'Every' })).toHaveValue('30m');
  await expect(form.getByLabel('Environment')).toHaveValue('DB_PASSWORD=***');

  for (const [mode, value, runs] of [
    ['Daily at', '07:00, 19:30', 5],
    ['Cron', '0 9 * * 1-5', 5],
    ['Every', '2h', 5],
    ['Once at', '2099-01-01T09:00', 1],
    ['Once in', '90m', 1],
  ] as const) {
    await form.getByRole('radio', { name: mode }).check();
    await form.getByRole('textbox', { name: mode }).fill(value);
    await expect(preview).toHaveCount(runs);
  }
  await form.getByRole('radio', { name: 'Daily at' }).check();
  await form.getByRole('textbox', { name: 'Daily at' }).fill('25:00');
  await expect(page.locator('.field').filter({ has: page.getByRole('textbox', { name: 'Daily at' }) }).locator('.field-error')).not.toBeEmpty();
  await form.getByRole('textbox', { name: 'Daily at' }).fill('07:00, 19:30');
  await form.getByLabel('Name').fill('Photo sync');
  await shoot(page, 'editor');
  await form.getByRole('button', { name: 'Save changes' }).click();
  await expect(page).toHaveURL(new RegExp(`#/routine/`));
  const def = (await d.api('routines.show', { id })).definition;
  expect(def.name).toBe('Photo sync');
  expect(def.timing).toEqual({ mode: 'runtimes', runtimes: ['07:00', '19:30'] });
  // The masked secret was not sent back: the stored value is intact (still masked on the way out).
  expect(def.env).toEqual({ DB_PASSWORD: '***' });
});
