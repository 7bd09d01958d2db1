// The settings table: every TEND_* knob read once, each keeping how it always answered a bad value
// (refuse the start, or warn and use the default), named in the message.
import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, KNOBS, readSettings, settings, SettingsError, settingsForStart } from '../../main/engine/settings.js';

const read = (env: Record<string, string>) => readSettings(env);

describe('readSettings', () => {
  it('an empty environment gives the defaults, and so do empty and blank values', () => {
    expect(read({})).toEqual({ settings: settings(), problems: [] });
    expect(read(Object.fromEntries(Object.keys(KNOBS).map((k) => [k, '']))).settings).toEqual(DEFAULT_SETTINGS);
    expect(read(Object.fromEntries(Object.keys(KNOBS).map((k) => [k, '  ']))).settings).toEqual(DEFAULT_SETTINGS);
    expect(DEFAULT_SETTINGS).toMatchObject({ intervalMs: 1000, api: true, apiHost: '127.0.0.1', apiPort: null, maxParallel: 8, batchSlots: null, keepDays: 30, commandTtlMs: 60_000, workerOfflineMs: 30_000, killGraceMs: 10_000, metricsPublic: false });
  });

  it('reads every knob', () => {
    const { settings: s, problems } = read({
      TEND_DAEMON_INTERVAL_MS: '250.4',
      TEND_API: 'off',
      TEND_API_HOST: '0.0.0.0',
      TEND_API_PORT: '7478',
      TEND_METRICS_PUBLIC: 'Yes',
      TEND_MAX_PARALLEL: '3',
      TEND_BATCH_SLOTS: '0',
      TEND_KEEP_DAYS: '7',
      TEND_KILL_GRACE_MS: '0',
      TEND_COMMAND_TTL_MS: '1e3',
      TEND_WORKER_OFFLINE_MS: '1500',
      TEND_SLURM_BIN_DIR: '/opt/slurm/bin',
      TEND_SLURM_SHARED_FS: 'on',
      TEND_WEBHOOK_QUEUE_MAX: '5',
      TEND_WEBHOOK_MAX_ATTEMPTS: '2',
      TEND_WEBHOOK_BACKOFF_MS: '200',
      TEND_WEBHOOK_MAX_BACKOFF_MS: '400',
      TEND_WEBHOOK_TIMEOUT_MS: '1000',
      TEND_WEBHOOK_POLL_MS: '50',
    });
    expect(problems).toEqual([]);
    expect(s).toEqual({
      ...DEFAULT_SETTINGS,
      intervalMs: 250,
      api: false,
      apiHost: '0.0.0.0',
      apiPort: 7478,
      metricsPublic: true,
      maxParallel: 3,
      batchSlots: 0,
      keepDays: 7,
      killGraceMs: 0,
      commandTtlMs: 1000,
      workerOfflineMs: 1500,
      slurmBinDir: '/opt/slurm/bin',
      slurmSharedFs: true,
      webhooks: { ...DEFAULT_SETTINGS.webhooks, queueMax: 5, maxAttempts: 2, backoffMs: 200, maxBackoffMs: 400, timeoutMs: 1000, pollMs: 50 },
    });
  });

  it('TEND_API is on unless "off"; the flags are on only for 1, true, yes or on', () => {
    expect(read({ TEND_API: 'on' }).settings.api).toBe(true);
    expect(read({ TEND_API: 'OFF' }).settings.api).toBe(true);
    for (const v of ['1', 'true', 'ON']) expect(read({ TEND_METRICS_PUBLIC: v, TEND_SLURM_SHARED_FS: v }).settings).toMatchObject({ metricsPublic: true, slurmSharedFs: true });
    for (const v of ['0', 'no', 'public']) expect(read({ TEND_METRICS_PUBLIC: v, TEND_SLURM_SHARED_FS: v })).toMatchObject({ settings: { metricsPublic: false, slurmSharedFs: false }, problems: [] });
  });

  it('TEND_KEEP_DAYS: whole days from 1 to 36500 or "forever" (null: keep everything); anything else refused', () => {
    expect(read({ TEND_KEEP_DAYS: ' forever ' }).settings.keepDays).toBeNull();
    expect(read({ TEND_KEEP_DAYS: '36500' }).settings.keepDays).toBe(36_500);
    for (const bad of ['0', '-3', '1.5', 'week', '36501']) {
      expect(read({ TEND_KEEP_DAYS: bad }).problems).toEqual([{ knob: 'TEND_KEEP_DAYS', refused: true, message: `TEND_KEEP_DAYS must be a whole number of days from 1 to 36500, or "forever", got "${bad}"` }]);
    }
  });

  it('refuses a bad pass interval, limit or API port, naming each', () => {
    const { problems } = read({ TEND_DAEMON_INTERVAL_MS: '5', TEND_MAX_PARALLEL: '0', TEND_BATCH_SLOTS: '-1', TEND_API_PORT: '99999' });
    expect(problems).toEqual([
      { knob: 'TEND_DAEMON_INTERVAL_MS', refused: true, message: 'TEND_DAEMON_INTERVAL_MS must be a number of milliseconds between 10 and 3600000, got "5"' },
      { knob: 'TEND_API_PORT', refused: true, message: 'TEND_API_PORT must be a port from 0 to 65535, got "99999"' },
      { knob: 'TEND_MAX_PARALLEL', refused: true, message: 'TEND_MAX_PARALLEL must be an integer from 1 to 10000, got "0"' },
      { knob: 'TEND_BATCH_SLOTS', refused: true, message: 'TEND_BATCH_SLOTS must be an integer from 0 to 10000, got "-1"' },
    ]);
    for (const bad of ['Infinity', 'NaN', 'soon', '3600001']) expect(read({ TEND_DAEMON_INTERVAL_MS: bad }).problems).toHaveLength(1);
    expect(read({ TEND_MAX_PARALLEL: '2.5' }).problems[0]!.refused).toBe(true);
  });

  it('warns about a bad timeout and uses its default', () => {
    const { settings: s, problems } = read({ TEND_COMMAND_TTL_MS: '50', TEND_WORKER_OFFLINE_MS: 'soon', TEND_KILL_GRACE_MS: '-1', TEND_WEBHOOK_TIMEOUT_MS: '1.5' });
    expect(s).toEqual(DEFAULT_SETTINGS);
    expect(problems).toEqual([
      { knob: 'TEND_KILL_GRACE_MS', refused: false, message: 'TEND_KILL_GRACE_MS must be milliseconds from 0 to 86400000, got "-1": using 10000' },
      { knob: 'TEND_COMMAND_TTL_MS', refused: false, message: 'TEND_COMMAND_TTL_MS must be milliseconds from 100 to 86400000, got "50": using 60000' },
      { knob: 'TEND_WORKER_OFFLINE_MS', refused: false, message: 'TEND_WORKER_OFFLINE_MS must be milliseconds from 100 to 86400000, got "soon": using 30000' },
      { knob: 'TEND_WEBHOOK_TIMEOUT_MS', refused: false, message: 'TEND_WEBHOOK_TIMEOUT_MS must be an integer from 100 to 300000, got "1.5": using 10000' },
    ]);
  });

  it('a webhook backoff above its maximum raises the maximum', () => {
    expect(read({ TEND_WEBHOOK_BACKOFF_MS: '600000' }).settings.webhooks).toMatchObject({ backoffMs: 600_000, maxBackoffMs: 600_000 });
  });

  it('reads the environment it is given, nothing else', () => {
    const before = JSON.stringify(process.env);
    expect(read({ TEND_MAX_PARALLEL: '2' }).settings.maxParallel).toBe(2);
    expect(JSON.stringify(process.env)).toBe(before);
  });
});

describe('settingsForStart', () => {
  it('throws one SettingsError naming every refused knob, and warns about none then', () => {
    const warned: string[] = [];
    let err: unknown;
    try {
      settingsForStart({ TEND_KEEP_DAYS: '0', TEND_MAX_PARALLEL: 'x', TEND_COMMAND_TTL_MS: 'x' }, (m) => warned.push(m));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SettingsError);
    expect((err as SettingsError).problems.map((p) => p.knob)).toEqual(['TEND_MAX_PARALLEL', 'TEND_KEEP_DAYS']);
    expect((err as Error).message).toBe('TEND_MAX_PARALLEL must be an integer from 1 to 10000, got "x"\nTEND_KEEP_DAYS must be a whole number of days from 1 to 36500, or "forever", got "0"');
    expect(warned).toEqual([]);
  });

  it('otherwise returns the settings, each warning told once', () => {
    const warned: string[] = [];
    const s = settingsForStart({ TEND_KEEP_DAYS: 'forever', TEND_WORKER_OFFLINE_MS: '1' }, (m) => warned.push(m));
    expect(s).toEqual(settings({ keepDays: null }));
    expect(warned).toEqual(['TEND_WORKER_OFFLINE_MS must be milliseconds from 100 to 86400000, got "1": using 30000']);
  });
});

describe('settings()', () => {
  it('replaces what it is given and leaves the defaults alone', () => {
    const s = settings({ workerOfflineMs: 5, webhooks: { pollMs: 10 } });
    expect(s).toEqual({ ...DEFAULT_SETTINGS, workerOfflineMs: 5, webhooks: { ...DEFAULT_SETTINGS.webhooks, pollMs: 10 } });
    expect(DEFAULT_SETTINGS.workerOfflineMs).toBe(30_000);
    expect(DEFAULT_SETTINGS.webhooks.pollMs).toBe(1000);
  });
});
