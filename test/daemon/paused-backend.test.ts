// A paused backend (here: no worker ever connected for a computer) is visible where a person
// looks: daemon status, doctor and routine show, with the reason; and a job posted to a computer
// that has no token and no worker is flagged by doctor.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { assertBuilt, killTracked, scratch, tend, tendOk } from '../helpers/cli.js';
import { Daemon, stopOwner } from '../helpers/daemon.js';

interface Finding { id: string; severity: string; message: string; action: string | null }
let box: ReturnType<typeof scratch>;
beforeEach(() => {
  assertBuilt();
  box = scratch('tend-paused-');
});
afterEach(async () => {
  await stopOwner(box.dir);
  await killTracked();
  box.remove();
});

it('a computer without a worker: its backend is paused in status, doctor and routine show', async () => {
  tendOk(box.dir, ['routine', 'add', 'bob@gpu:train', '--every', '1h', '--', 'true']);
  await new Daemon(box.dir).ready();
  tendOk(box.dir, ['routine', 'run', 'bob@gpu:train', '--no-wait']);
  const why = 'worker bob@gpu has never connected (start it: tend worker --computer bob@gpu …)';
  await waitFor(() => tendOk<{ pausedBackends: Record<string, string> }>(box.dir, ['daemon', 'status', '--json']).pausedBackends['pool:bob@gpu'], 20_000, 'the backend to be paused', 200);
  expect(tend(box.dir, ['daemon', 'status']).stdout).toContain(`paused:    backend pool:bob@gpu: ${why}`);
  const findings = JSON.parse(tend(box.dir, ['daemon', 'doctor', '--json']).stdout) as Finding[];
  expect(findings).toContainEqual(expect.objectContaining({ id: 'backend-paused', severity: 'warn', message: `backend pool:bob@gpu is paused: ${why}` }));
  expect(tendOk<string>(box.dir, ['routine', 'show', 'bob@gpu:train'])).toContain(`computer: bob@gpu, backend local — PAUSED: ${why}`);
  expect(tendOk<{ backendPaused: string | null }>(box.dir, ['routine', 'show', 'bob@gpu:train', '--json']).backendPaused).toBe(why);
});

it('doctor flags a job posted to a computer that has no token and no worker; a token clears it', () => {
  tendOk(box.dir, ['job', 'post', '--computer', 'eve@lab', '--', 'true']);
  const find = () => (JSON.parse(tend(box.dir, ['daemon', 'doctor', '--json']).stdout) as Finding[]).find((f) => f.id === 'job-no-worker');
  expect(find()).toMatchObject({ severity: 'warn', message: '1 batch job posted to eve@lab, which has no worker token and no worker: nothing will run it' });
  expect(find()!.action).toContain('tend worker token eve@lab');
  tendOk(box.dir, ['worker', 'token', 'eve@lab']);
  expect(find()).toBeUndefined();
});
