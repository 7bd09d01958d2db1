// The one routine input schema: what it accepts, how it normalises, and that every refusal names
// its field. And schedule files: every problem at once, secrets kept across export → import.
import { describe, expect, it } from 'vitest';
import { parseRoutine, toInput } from '../../../main/engine/domain/schema.js';
import { TendError, type Issue } from '../../../main/engine/errors.js';
import { exportSchedule, importSchedule, parseScheduleFile } from '../../../main/engine/ops/schedules.js';
import { saveRoutine } from '../../../main/engine/ops/routines.js';
import { Store } from '../../../main/engine/store/store.js';

const NOW = Date.UTC(2026, 0, 5, 12, 0, 0);
const base = { id: 'me@box:r', command: 'x', tz: 'UTC' };

function issues(fn: () => unknown): Issue[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof TendError && err.code === 'INVALID') return err.issues;
    throw err;
  }
  throw new Error('expected INVALID');
}

describe('parseRoutine', () => {
  it.each([
    [{ runtimes: '19:30, 07:00' }, { mode: 'runtimes', runtimes: ['07:00', '19:30'] }],
    [{ cron: ' 0 7 * * 1-5 ' }, { mode: 'cron', cron: '0 7 * * 1-5' }],
    [{ every: '1h30m' }, { mode: 'every', everyMs: 5_400_000 }],
    [{ every: 90_000 }, { mode: 'every', everyMs: 90_000 }],
    [{ at: '2030-01-01T10:00', tz: 'Europe/Berlin' }, { mode: 'at', at: '2030-01-01T09:00:00.000Z' }],
    [{ in: '2h' }, { mode: 'at', at: new Date(NOW + 7_200_000).toISOString() }],
  ])('timing %o → %o', (timing, expected) => {
    expect(parseRoutine({ ...base, ...timing }, { now: NOW }).timing).toEqual(expected);
  });

  it('normalises defaults and round-trips through toInput', () => {
    const def = parseRoutine({ ...base, cron: '0 7 * * *', env: { A: '1' }, args: ['--x'], after: 'me@box:a, me@box:b' }, { now: NOW });
    expect(def).toMatchObject({ name: 'r', schedule: 'default', computer: 'me@box', kind: 'batch', misfire: 'once', overlap: 'skip', dependencies: ['me@box:a', 'me@box:b'] });
    expect(parseRoutine(toInput(def), { now: NOW })).toEqual(def);
  });

  it('every problem, each with its field', () => {
    const found = issues(() =>
      parseRoutine({ id: 'me@no-path', every: '0s', cron: 'x', tz: 'Atlantis/Capital', misfire: 'never', env: { 'BAD-NAME': 'v' }, log_cap: 10, colour: 'blue' }, { now: NOW }),
    );
    const paths = found.map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['id', 'every', 'tz', 'misfire', 'env.BAD-NAME', 'log_cap', '', 'cron', 'command']));
    expect(found.find((i) => i.path === 'tz')!.message).toBe('unknown IANA time zone "Atlantis/Capital" (e.g. Europe/Berlin, UTC)');
    expect(found.find((i) => i.path === '')!.message).toBe('unknown field colour');
    for (const i of found) expect(i.message.length).toBeGreaterThan(5);
  });

  it('realtime takes no timing; batch takes exactly one; heartbeat is realtime only', () => {
    expect(issues(() => parseRoutine({ ...base, realtime: true, every: '5m' }, { now: NOW }))).toEqual([{ path: 'every', message: 'realtime routines run continuously and take no timing' }]);
    expect(issues(() => parseRoutine({ ...base }, { now: NOW }))[0]!.message).toMatch(/exactly one timing/);
    expect(issues(() => parseRoutine({ ...base, every: '5m', heartbeat: '1m' }, { now: NOW }))).toEqual([{ path: 'heartbeat', message: 'only realtime routines heartbeat' }]);
  });
});

describe('schedule files', () => {
  it('a bad routine does not hide the dependency problems of the others; paths are file positions', () => {
    const store = Store.open(':memory:');
    try {
      const text = `schedule: s
routines:
  - { id: me@box:a, command: a, every: 0s }
  - { id: me@box:b, command: b, every: 5m, after: me@box:a }
  - { id: me@box:c, command: c, every: 5m, after: me@box:ghost }
  - { id: me@box:b, command: b2, every: 5m }
`;
      expect(issues(() => parseScheduleFile(text, store, NOW))).toEqual([
        { path: 'routines.0.every', message: 'duration must be positive, got "0s"' },
        { path: 'routines.3.id', message: 'duplicate routine id me@box:b (also routines.1)' },
        { path: 'routines.2.after.0', message: 'unknown dependency me@box:ghost: no routine with that id in schedule s' },
      ]);
    } finally {
      store.close();
    }
  });

  it('importing an export keeps the stored secrets; a changed value replaces them', () => {
    const store = Store.open(':memory:');
    try {
      saveRoutine(store, { ...base, every: '5m', schedule: 's', args: ['--password=hunter2', '--token', 'abc123', '-v'], env: { API_KEY: 'k-123456', LANG: 'C' } }, { now: NOW });
      const exported = exportSchedule(store, 's');
      expect(exported).not.toMatch(/hunter2|abc123|k-123456/);
      expect(importSchedule(store, exported, NOW)[0]).toMatchObject({ unchanged: ['me@box:r'], updated: [] });
      expect(store.routines.get('me@box:r')).toMatchObject({ args: ['--password=hunter2', '--token', 'abc123', '-v'], env: { API_KEY: 'k-123456', LANG: 'C' } });

      importSchedule(store, exported.replace('--password=***', '--password=new-secret').replace('API_KEY: "***"', 'API_KEY: other'), NOW);
      expect(store.routines.get('me@box:r')).toMatchObject({ args: ['--password=new-secret', '--token', 'abc123', '-v'], env: { API_KEY: 'other', LANG: 'C' } });
    } finally {
      store.close();
    }
  });
});
