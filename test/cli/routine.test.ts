// `tend routine …` through the built CLI, against a scratch data dir.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cliSandbox } from './run-cli.js';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const HOUR = 3_600_000;

interface ListRow {
  id: string;
  name: string;
  schedule: string;
  kind: 'batch' | 'realtime';
  trigger: string | null;
  nextRun: string | null;
  today: string | null;
  computer: string;
  external: boolean;
}

interface Detail extends ListRow {
  definition: {
    command: string;
    args: string[];
    env: Record<string, string>;
    timing: { mode: string; [k: string]: unknown } | null;
    tz: string;
    dependencies: string[];
    timeoutMs: number | null;
    heartbeatMs: number | null;
    retry: { delayMs: number; windowMs: number };
    misfire: string;
    overlap: string;
    cwd: string | null;
  };
  triggerState: { state: string; failCount: number; lastError: string | null } | null;
  nextRuns: string[];
  dependents: string[];
}

let cli: ReturnType<typeof cliSandbox>;
beforeEach(() => {
  cli = cliSandbox();
});
afterEach(() => cli.remove());

const list = () => cli.ok<ListRow[]>('routine', 'list', '--json');
const show = (id: string) => cli.ok<Detail>('routine', 'show', id, '--json');
const row = (id: string) => {
  const r = list().find((x) => x.id === id);
  if (!r) throw new Error(`${id} not in routine list`);
  return r;
};

describe('routine add: every timing mode', () => {
  it('--runtimes: next run is the next HH:MM in the routine time zone, as ISO UTC', () => {
    const before = Date.now();
    cli.ok('routine', 'add', 'me@box:reports/download', '--runtimes', '07:00', '--tz', 'Europe/Berlin', '--', './download.sh');
    const r = row('me@box:reports/download');
    expect(r).toMatchObject({ name: 'reports/download', schedule: 'default', kind: 'batch', trigger: 'scheduled', today: null });
    expect(r.nextRun).toMatch(ISO_UTC);
    const next = Date.parse(r.nextRun!);
    expect(next).toBeGreaterThan(before);
    expect(next).toBeLessThanOrEqual(before + 24 * HOUR);
    // 07:00 in Berlin is 06:00 UTC in winter, 05:00 UTC in summer.
    expect(['06:00:00.000Z', '05:00:00.000Z']).toContain(r.nextRun!.slice(11));
  });

  it('--cron: the next match of the expression', () => {
    cli.ok('routine', 'add', 'me@box:hourly', '--cron', '15 * * * *', '--tz', 'UTC', '--', 'true');
    const r = row('me@box:hourly');
    expect(r.nextRun).toMatch(/T\d{2}:15:00\.000Z$/);
    expect(Date.parse(r.nextRun!) - Date.now()).toBeLessThanOrEqual(HOUR);
    expect(show('me@box:hourly').definition.timing).toEqual({ mode: 'cron', cron: '15 * * * *' });
  });

  it('--every: first run one interval from now', () => {
    const before = Date.now();
    cli.ok('routine', 'add', 'me@box:poll', '--every', '10m', '--', 'true');
    const r = row('me@box:poll');
    const next = Date.parse(r.nextRun!);
    expect(next).toBeGreaterThanOrEqual(before + 10 * 60_000);
    expect(next).toBeLessThanOrEqual(Date.now() + 10 * 60_000);
    expect(show('me@box:poll').definition.timing).toEqual({ mode: 'every', everyMs: 600_000 });
  });

  it('--at: once, a local time read in --tz', () => {
    cli.ok('routine', 'add', 'me@box:once', '--at', '2030-01-01T10:00', '--tz', 'Europe/Berlin', '--', 'true');
    expect(row('me@box:once').nextRun).toBe('2030-01-01T09:00:00.000Z');
    // One-shots retry by default (every 60 s for an hour).
    expect(show('me@box:once').definition.retry).toEqual({ delayMs: 60_000, windowMs: HOUR });
  });

  it('--in: once, this long from now (stored as an instant)', () => {
    const before = Date.now();
    cli.ok('routine', 'add', 'me@box:later', '--in', '2h', '--', 'true');
    const next = Date.parse(row('me@box:later').nextRun!);
    expect(next).toBeGreaterThanOrEqual(before + 2 * HOUR);
    expect(next).toBeLessThanOrEqual(Date.now() + 2 * HOUR);
    expect(show('me@box:later').definition.timing?.mode).toBe('at');
  });

  it('--realtime: no timing and no next run', () => {
    cli.ok('routine', 'add', 'me@box:collector', '--realtime', '--heartbeat', '30s', '--', './collect.sh');
    expect(row('me@box:collector')).toMatchObject({ kind: 'realtime', trigger: 'scheduled', nextRun: null });
    expect(show('me@box:collector').definition).toMatchObject({ timing: null, heartbeatMs: 30_000 });
  });

  it('a short id is expanded to user@COMPUTER:path; --json prints the stored definition', () => {
    const def = cli.ok<{ id: string; command: string; args: string[] }>('routine', 'add', 'backups/nightly', '--cron', '0 3 * * *', '--json', '--', 'rsync', '-a', 'src/', 'dst/');
    expect(def.id).toMatch(/^[^@\s:]+@[^@\s:]+:backups\/nightly$/);
    expect(def).toMatchObject({ command: 'rsync', args: ['-a', 'src/', 'dst/'] });
    expect(list().map((r) => r.id)).toEqual([def.id]);
  });

  it('adding an id that exists is refused and changes nothing', () => {
    cli.ok('routine', 'add', 'me@box:x', '--every', '5m', '--', 'a');
    const r = cli.tend('routine', 'add', 'me@box:x', '--every', '1h', '--', 'b');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/already exists/);
    expect(show('me@box:x').definition.command).toBe('a');
  });
});

describe('routine list / show', () => {
  it('list --json gives id, name, schedule, kind, trigger, next run and today per routine', () => {
    cli.ok('routine', 'add', 'me@box:a', '--every', '1h', '--name', 'group', '--schedule', 'ops', '--', 'true');
    cli.ok('routine', 'add', 'me@box:b', '--realtime', '--', 'true');
    const rows = list();
    expect(rows).toHaveLength(2);
    for (const r of rows) {
      for (const k of ['id', 'name', 'schedule', 'kind', 'trigger', 'nextRun', 'today'] as const) expect(r).toHaveProperty(k);
    }
    expect(rows.find((r) => r.id === 'me@box:a')).toMatchObject({ name: 'group', schedule: 'ops', kind: 'batch', trigger: 'scheduled', today: null });
  });

  it("today's status follows today's run (a manual run, queued without a daemon)", () => {
    cli.ok('routine', 'add', 'me@box:a', '--every', '1h', '--', 'true');
    const run = cli.ok<{ id: string; status: string; daemon: boolean }>('routine', 'run', 'me@box:a', '--no-wait', '--json');
    expect(run).toMatchObject({ status: 'PENDING', daemon: false });
    expect(row('me@box:a').today).toBe('PENDING');
  });

  it('list on an empty data dir: [] and a hint in the human form', () => {
    expect(list()).toEqual([]);
    expect(cli.ok<string>('routine', 'list')).toMatch(/no routines/);
  });

  it('show --json: definition, trigger, upcoming runs, dependencies and dependents', () => {
    cli.ok('routine', 'add', 'me@box:dl', '--runtimes', '07:00,19:00', '--tz', 'UTC', '--', './dl.sh');
    cli.ok('routine', 'add', 'me@box:parse', '--runtimes', '07:30', '--tz', 'UTC', '--after', 'me@box:dl', '--timeout', '20m', '--', './parse.sh', '--fast');
    const d = show('me@box:parse');
    expect(d).toMatchObject({ id: 'me@box:parse', kind: 'batch', trigger: 'scheduled', dependencies: ['me@box:dl'] });
    expect(d.definition).toMatchObject({ command: './parse.sh', args: ['--fast'], tz: 'UTC', timeoutMs: 1_200_000, timing: { mode: 'runtimes', runtimes: ['07:30'] } });
    expect(d.nextRuns.length).toBeGreaterThan(1);
    for (const t of d.nextRuns) expect(t).toMatch(/T07:30:00\.000Z$/);
    expect(show('me@box:dl').dependents).toEqual(['me@box:parse']);
    const human = cli.ok<string>('routine', 'show', 'me@box:parse');
    expect(human).toMatch(/command: +\.\/parse\.sh --fast/);
    expect(human).toMatch(/after: +me@box:dl/);
    // What the definition says about time and policy, not only its command.
    expect(human).toMatch(/group: +parse/);
    expect(human).toMatch(/timing: +runtimes 07:30 \(UTC\)/);
    expect(human).toMatch(/policies: +retry none, misfire once, overlap skip, tolerance 5m, timeout 20m, log cap 64MiB/);
  });

  it('show of an unknown routine fails (exit 1) naming it', () => {
    const r = cli.tend('routine', 'show', 'me@box:nope');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/routine me@box:nope not found/);
  });
});

describe('routine edit', () => {
  beforeEach(() => {
    cli.ok('routine', 'add', 'me@box:job', '--cron', '0 7 * * *', '--tz', 'Europe/Berlin', '--name', 'reports', '--timeout', '30m', '--env', 'LANG=C', '--misfire', 'skip', '--', './job.sh', '--verbose');
  });

  it('changes only the given flags', () => {
    const before = show('me@box:job').definition;
    cli.ok('routine', 'edit', 'me@box:job', '--timeout', '1h');
    const after = show('me@box:job');
    expect(after.definition).toEqual({ ...before, timeoutMs: HOUR });
    expect(after.name).toBe('reports');
  });

  it('a new command replaces command and args, nothing else', () => {
    const before = show('me@box:job').definition;
    cli.ok('routine', 'edit', 'me@box:job', '--', './other.sh', 'x');
    expect(show('me@box:job').definition).toEqual({ ...before, command: './other.sh', args: ['x'] });
  });

  it('switching timing mode replaces the old one and re-arms the trigger', () => {
    const before = Date.now();
    cli.ok('routine', 'edit', 'me@box:job', '--every', '15m');
    const d = show('me@box:job');
    expect(d.definition.timing).toEqual({ mode: 'every', everyMs: 900_000 });
    expect(d.definition.tz).toBe('Europe/Berlin');
    const next = Date.parse(d.nextRun!);
    expect(next).toBeGreaterThanOrEqual(before + 900_000);
    expect(next).toBeLessThanOrEqual(Date.now() + 900_000);

    cli.ok('routine', 'edit', 'me@box:job', '--at', '2031-06-01T12:00');
    expect(show('me@box:job').definition.timing).toEqual({ mode: 'at', at: '2031-06-01T10:00:00.000Z' });
  });

  it('--realtime drops the timing; --batch with a timing brings it back (and drops the heartbeat)', () => {
    cli.ok('routine', 'edit', 'me@box:job', '--realtime', '--heartbeat', '1m');
    expect(show('me@box:job')).toMatchObject({ kind: 'realtime', nextRun: null, definition: { timing: null, heartbeatMs: 60_000 } });

    const bare = cli.tend('routine', 'edit', 'me@box:job', '--batch');
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/needs exactly one timing/);

    cli.ok('routine', 'edit', 'me@box:job', '--batch', '--runtimes', '08:00');
    expect(show('me@box:job')).toMatchObject({ kind: 'batch', definition: { timing: { mode: 'runtimes', runtimes: ['08:00'] }, heartbeatMs: null } });
  });

  it('an edit that is refused leaves the definition as it was', () => {
    const before = show('me@box:job').definition;
    const r = cli.tend('routine', 'edit', 'me@box:job', '--timeout', '0s');
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('tend: --timeout: duration must be positive, got "0s"');
    expect(show('me@box:job').definition).toEqual(before);
  });

  it('editing an unknown routine fails naming it', () => {
    const r = cli.tend('routine', 'edit', 'me@box:nope', '--every', '1h');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/me@box:nope not found/);
  });
});

describe('routine remove', () => {
  it('removes the definition', () => {
    cli.ok('routine', 'add', 'me@box:a', '--every', '1h', '--', 'true');
    cli.ok('routine', 'add', 'me@box:b', '--every', '1h', '--', 'true');
    expect(cli.ok('routine', 'remove', 'me@box:a', '--json')).toEqual({ id: 'me@box:a', removed: true });
    expect(list().map((r) => r.id)).toEqual(['me@box:b']);
    expect(cli.tend('routine', 'show', 'me@box:a').code).toBe(1);
  });

  it('refuses to remove a routine others depend on, naming them', () => {
    cli.ok('routine', 'add', 'me@box:a', '--every', '1h', '--', 'true');
    cli.ok('routine', 'add', 'me@box:b', '--every', '1h', '--after', 'me@box:a', '--', 'true');
    const r = cli.tend('routine', 'remove', 'me@box:a');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/me@box:b/);
    expect(list()).toHaveLength(2);
  });
});

describe('routine pause / resume / clear', () => {
  it('pause takes it out of the due runs; resume re-arms it from now', () => {
    cli.ok('routine', 'add', 'me@box:a', '--every', '1h', '--', 'true');
    expect(cli.ok('routine', 'pause', 'me@box:a', '--json')).toMatchObject({ id: 'me@box:a', trigger: 'paused' });
    expect(row('me@box:a')).toMatchObject({ trigger: 'paused', nextRun: null });

    const before = Date.now();
    const resumed = cli.ok<{ trigger: string; nextRun: string }>('routine', 'resume', 'me@box:a', '--json');
    expect(resumed.trigger).toBe('scheduled');
    expect(Date.parse(resumed.nextRun)).toBeGreaterThanOrEqual(before + HOUR);
    expect(row('me@box:a')).toMatchObject({ trigger: 'scheduled', nextRun: resumed.nextRun });
  });

  it('clear drops the trigger state (paused included) and re-arms it', () => {
    cli.ok('routine', 'add', 'me@box:a', '--cron', '0 * * * *', '--', 'true');
    cli.ok('routine', 'pause', 'me@box:a');
    const cleared = cli.ok<{ trigger: string; nextRun: string }>('routine', 'clear', 'me@box:a', '--json');
    expect(cleared.trigger).toBe('scheduled');
    expect(cleared.nextRun).toMatch(/T\d{2}:00:00\.000Z$/);
    expect(show('me@box:a').triggerState).toMatchObject({ state: 'scheduled', failCount: 0, lastError: null });
  });

  it('a paused routine stays paused across an edit of its timing', () => {
    cli.ok('routine', 'add', 'me@box:a', '--every', '1h', '--', 'true');
    cli.ok('routine', 'pause', 'me@box:a');
    cli.ok('routine', 'edit', 'me@box:a', '--every', '2h');
    expect(row('me@box:a').trigger).toBe('paused');
  });

  it('on an unknown routine: exit 1, naming it', () => {
    for (const verb of ['pause', 'resume', 'clear']) {
      const r = cli.tend('routine', verb, 'me@box:nope');
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/me@box:nope not found/);
    }
  });
});

describe('routine add|edit --backend slurm', () => {
  it('defines a Slurm routine from flags; edit replaces its Slurm options; bad ones are refused by flag', () => {
    const add = cli.tend('routine', 'add', 'me@host:train', '--every', '1h', '--backend', 'slurm', '--partition', 'gpu', '--cpus', '4', '--json', '--', './train.sh');
    expect(add.code, add.stderr).toBe(0);
    expect(JSON.parse(add.stdout)).toMatchObject({ backend: 'slurm', slurm: { partition: 'gpu', cpus: 4 } });
    const edit = cli.tend('routine', 'edit', 'me@host:train', '--mem', '2G', '--json');
    expect(edit.code, edit.stderr).toBe(0);
    expect(JSON.parse(edit.stdout).slurm).toEqual({ memory: '2048M' });
    const bad = cli.tend('routine', 'edit', 'me@host:train', '--time-limit', 'soon');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^tend: --time-limit: time limit: /);
    const local = cli.tend('routine', 'add', 'me@host:other', '--every', '1h', '--partition', 'gpu', '--', 'true');
    expect(local.code).toBe(2);
    expect(local.stderr.trimEnd()).toMatch(/^tend: --backend: Slurm options .* need --backend slurm$/);
  });
});
