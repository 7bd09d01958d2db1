// A failed one-shot whose retry is queued says when the retry runs, and which attempt it is —
// not "next: -" — in routine list and routine show, text and JSON.
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { killTracked, scratch, tend, tendOk } from '../helpers/cli.js';
import { Daemon, stopOwner } from '../helpers/daemon.js';
import { waitFor } from '../helpers/wait.js';

let box: ReturnType<typeof scratch>;
let data: string;
beforeEach(() => {
  box = scratch('tend-retry-');
  data = join(box.dir, 'data');
});
afterEach(async () => {
  await stopOwner(data);
  await killTracked();
  box.remove();
});

interface Row { id: string; nextRun: string | null; retry: { at: string; attempt: number; maxAttempts: number } | null }

it('a queued retry is shown as the next time, with attempt n of m', async () => {
  tendOk(data, ['routine', 'add', 'backup/once', '--in', '1s', '--retry', '1h/2h', '--', 'sh', '-c', 'echo disk full; exit 1']);
  await new Daemon(data).ready();
  const row = () => tendOk<Row[]>(data, ['routine', 'list', '--json']).find((r) => r.id.endsWith(':backup/once'))!;
  const r = await waitFor(() => row().retry, 30_000, 'the retry to be queued', 200);
  expect(r).toMatchObject({ attempt: 2, maxAttempts: 3 });
  const list = tendOk<string>(data, ['routine', 'list']);
  expect(list).toContain(`${r.at} (retry 2 of 3)`);
  const show = tendOk<string>(data, ['routine', 'show', 'backup/once']);
  expect(show).toMatch(new RegExp(`next: ${r.at.replace(/\./g, '\\.')} \\(retry 2 of 3\\)`));
  expect(show).not.toMatch(/next: -/);
});

it('tend logs of a routine waiting to retry shows the failed run’s output and says which run it is', async () => {
  tendOk(data, ['routine', 'add', 'backup/once', '--in', '1s', '--retry', '1h/2h', '--', 'sh', '-c', 'echo disk full; exit 1']);
  await new Daemon(data).ready();
  const row = () => tendOk<Row[]>(data, ['routine', 'list', '--json']).find((r) => r.id.endsWith(':backup/once'))!;
  await waitFor(() => row().retry, 30_000, 'the retry to be queued', 200);
  const runs = tendOk<{ history: { id: string; status: string; attempt: number }[] }>(data, ['routine', 'show', 'backup/once', '--json']).history;
  const failed = runs.find((r) => r.attempt === 1)!;
  const retry = runs.find((r) => r.attempt === 2)!;
  expect(failed.status).toBe('ERROR');
  const r = tend(data, ['logs', 'backup/once']);
  expect(r.code).toBe(0);
  expect(r.stdout).toBe('disk full\n');
  expect(r.stderr).toContain(`tend: run ${failed.id} (ERROR, attempt 1, scheduled `);
  expect(r.stderr).toContain(`the newest, run ${retry.id} (PENDING at ${row().retry!.at}), has no output yet`);
});
