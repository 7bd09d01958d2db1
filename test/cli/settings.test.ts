// The CLI reads the settings once per command: a bad timeout is named and its default used; a knob
// only the daemon refuses (the pass interval) does not stop a command; `tend worker` refuses a bad
// TEND_KEEP_DAYS as the daemon does.
import { afterEach, expect, it } from 'vitest';
import { scratch, tend } from '../helpers/cli.js';

let box: ReturnType<typeof scratch> | null = null;
afterEach(() => {
  box?.remove();
  box = null;
});

it('names a bad timeout and goes on with its default; a bad pass interval is the daemon’s to refuse', () => {
  box = scratch('tend-cli-settings-');
  const r = tend(box.dir, ['worker', 'forget', 'u@gone'], { TEND_WORKER_OFFLINE_MS: 'soon', TEND_DAEMON_INTERVAL_MS: '5' });
  expect(r.stderr.split('\n')).toEqual(['tend: TEND_WORKER_OFFLINE_MS must be milliseconds from 100 to 86400000, got "soon": using 30000', 'tend: worker u@gone not found', '']);
  expect(r.code).toBe(1);
});

it('tend worker refuses a bad TEND_KEEP_DAYS by name (exit 2) before connecting', () => {
  box = scratch('tend-cli-settings-');
  const r = tend(box.dir, ['worker', '--server', 'http://127.0.0.1:9', '--token', 't', '--computer', 'u@h'], { TEND_KEEP_DAYS: 'week' });
  expect(r.code).toBe(2);
  expect(r.stderr).toBe('tend: TEND_KEEP_DAYS: must be a whole number of days from 1 to 36500, or "forever", got "week"\n');
});
