// `tend schedule …`: YAML import (validated whole), export, observe/activate, the JSON Schema and
// the example schedule.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dbSnapshot } from './db-snapshot.js';
import { cliSandbox, REPO, runCli } from './run-cli.js';

interface ImportResult {
  schedule: string;
  created: string[];
  updated: string[];
  removed: string[];
  unchanged: string[];
}
interface ListRow {
  id: string;
  schedule: string;
  kind: string;
  trigger: string | null;
  nextRun: string | null;
}

let cli: ReturnType<typeof cliSandbox>;
beforeEach(() => {
  cli = cliSandbox();
  cli.ok('routine', 'list'); // the store exists before anything is imported
});
afterEach(() => cli.remove());

let files = 0;
function file(text: string): string {
  const path = join(cli.dir, `schedule-${++files}.yaml`);
  writeFileSync(path, text);
  return path;
}
const importFile = (text: string) => cli.ok<ImportResult[]>('schedule', 'import', file(text), '--json');
const list = () => cli.ok<ListRow[]>('routine', 'list', '--json');
const sorted = (xs: string[]) => [...xs].sort();

const VALID = `schedule: reports
routines:
  - id: me@box:dl
    command: ./dl.sh
    runtimes: "07:00"
    tz: Europe/Berlin
  - id: me@box:parse
    command: ./parse.sh
    runtimes: "07:15"
    tz: Europe/Berlin
    after: me@box:dl
  - id: me@box:collector
    realtime: true
    heartbeat: 1m
    command: ./collect.sh
`;

describe('schedule import: the whole file is validated first', () => {
  it('reports every error with its path, and changes nothing', () => {
    importFile(VALID);
    const before = dbSnapshot(cli.dir);
    const bad = file(`schedule: reports
routines:
  - id: me@box:dl
    command: ./dl.sh
    runtimes: "07:00"
  - id: me@box:parse
    command: ./parse.sh
    every: 0s
    after: me@box:dl
  - id: me@box:report
    command: ./report.sh
    cron: "99 * * * *"
    tz: Mars/Base
  - id: me@box:upload
    command: ./upload.sh
    every: 1h
    after: me@box:ghost
  - id: me@box:extra
    command: ./x.sh
    every: 5m
    cron: "0 * * * *"
    colour: blue
  - not a routine
`);
    const r = cli.tend('schedule', 'import', bad);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toEqual([
      'tend: routines.1.every: duration must be positive, got "0s"',
      'tend: routines.2.tz: unknown IANA time zone "Mars/Base" (e.g. Europe/Berlin, UTC)',
      'tend: routines.2.cron: minute: 99 is out of range 0-59',
      'tend: routines.4: unknown field colour',
      'tend: routines.4.every: only one timing mode allowed, got cron and every',
      'tend: routines.5: Invalid input: expected object, received string',
      'tend: routines.3.after.0: unknown dependency me@box:ghost: no routine with that id in schedule reports',
    ]);
    expect(dbSnapshot(cli.dir)).toEqual(before);
  });

  it('a bad header does not hide bad routines', () => {
    const r = cli.tend('schedule', 'import', file(`schedule: reports
mode: sometimes
owner: me
routines:
  - id: me@box:a
    command: a
    every: 5 fortnights
`));
    expect(r.code).toBe(2);
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      'tend: mode: Invalid option: expected one of "active"|"observe"',
      'tend: unknown field owner',
      expect.stringMatching(/^tend: routines\.0\.every: duration /),
    ]);
    expect(cli.ok('schedule', 'list', '--json')).toEqual([]);
  });

  it('a dependency cycle is named, with the path of the routine it starts from', () => {
    const r = cli.tend('schedule', 'import', file(`schedule: loop
routines:
  - { id: me@box:a, command: a, every: 5m, after: me@box:c }
  - { id: me@box:b, command: b, every: 5m, after: me@box:a }
  - { id: me@box:c, command: c, every: 5m, after: me@box:b }
`));
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('tend: routines.0.after: dependency cycle: me@box:a → me@box:c → me@box:b → me@box:a');
    expect(list()).toEqual([]);
  });

  it('a dependency on a routine that is itself invalid is not also reported as unknown', () => {
    const r = cli.tend('schedule', 'import', file(`schedule: s
routines:
  - { id: me@box:a, command: a, every: 0s }
  - { id: me@box:b, command: b, every: 5m, after: me@box:a }
`));
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('tend: routines.0.every: duration must be positive, got "0s"');
  });

  it('duplicate ids, a routine of another schedule, YAML syntax errors and unreadable files', () => {
    let r = cli.tend('schedule', 'import', file(`schedule: s
routines:
  - { id: me@box:a, command: a, every: 5m }
  - { id: me@box:a, command: b, every: 1h }
  - { id: me@box:c, command: c, every: 1h, schedule: other }
`));
    expect(r.code).toBe(2);
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      'tend: routines.1.id: duplicate routine id me@box:a (also routines.0)',
      'tend: routines.2.schedule: routine says schedule other, but the file is schedule s',
    ]);

    r = cli.tend('schedule', 'import', file('schedule: s\nroutines: [\n'));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^tend: YAML: .*line \d+, column \d+$/m);

    r = cli.tend('schedule', 'import', join(cli.dir, 'missing.yaml'));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^tend: file: cannot read .*missing\.yaml/);
    expect(list()).toEqual([]);
  });

  it('refuses a file that would remove a routine another schedule depends on', () => {
    importFile(VALID);
    cli.ok('routine', 'add', 'me@box:other', '--schedule', 'reports', '--every', '1h', '--after', 'me@box:dl', '--', 'x');
    const before = dbSnapshot(cli.dir);
    const r = cli.tend('schedule', 'import', file('schedule: reports\nroutines:\n  - { id: me@box:other, command: x, every: 1h, after: me@box:dl }\n'));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/routines\.0\.after\.0: unknown dependency me@box:dl/);
    expect(dbSnapshot(cli.dir)).toEqual(before);
  });
});

describe('schedule import: a valid file creates, updates and removes', () => {
  it('creates the routines with their triggers', () => {
    const res = importFile(VALID);
    expect(res).toHaveLength(1);
    expect(res[0]!.schedule).toBe('reports');
    expect(sorted(res[0]!.created)).toEqual(['me@box:collector', 'me@box:dl', 'me@box:parse']);
    const rows = list();
    expect(rows.map((r) => r.schedule)).toEqual(['reports', 'reports', 'reports']);
    expect(rows.find((r) => r.id === 'me@box:parse')).toMatchObject({ kind: 'batch', trigger: 'scheduled' });
    expect(rows.find((r) => r.id === 'me@box:parse')!.nextRun).toMatch(/T0[56]:15:00\.000Z$/);
    expect(rows.find((r) => r.id === 'me@box:collector')).toMatchObject({ kind: 'realtime', nextRun: null });
    expect(cli.ok('routine', 'show', 'me@box:parse', '--json')).toMatchObject({ dependencies: ['me@box:dl'] });
  });

  it('the same file again changes nothing', () => {
    importFile(VALID);
    const res = importFile(VALID);
    expect(res[0]).toMatchObject({ created: [], updated: [], removed: [] });
    expect(sorted(res[0]!.unchanged)).toEqual(['me@box:collector', 'me@box:dl', 'me@box:parse']);
  });

  it('an edited file updates what changed and removes what is gone; other schedules are untouched', () => {
    importFile(VALID);
    cli.ok('routine', 'add', 'me@box:elsewhere', '--every', '1h', '--', 'x');
    const res = importFile(`schedule: reports
routines:
  - id: me@box:dl
    command: ./dl.sh
    runtimes: "06:30"
    tz: Europe/Berlin
  - id: me@box:parse
    command: ./parse.sh
    runtimes: "07:15"
    tz: Europe/Berlin
    after: me@box:dl
  - id: me@box:report
    command: ./report.sh
    cron: "0 8 * * 1-5"
    tz: Europe/Berlin
    after: [me@box:parse]
`);
    expect(res[0]).toMatchObject({ created: ['me@box:report'], updated: ['me@box:dl'], removed: ['me@box:collector'], unchanged: ['me@box:parse'] });
    expect(sorted(list().map((r) => r.id))).toEqual(['me@box:dl', 'me@box:elsewhere', 'me@box:parse', 'me@box:report']);
    expect(list().find((r) => r.id === 'me@box:dl')!.nextRun).toMatch(/T0[45]:30:00\.000Z$/);
  });

  it('reads the file from stdin with "-"; an empty file is refused', () => {
    const empty = runCli(['schedule', 'import', '-'], { dataDir: cli.dir, input: '' });
    expect(empty.code).toBe(2);
    expect(empty.stderr.trim()).toMatch(/^tend: empty file/);
    expect(list()).toEqual([]);
    const r = runCli(['schedule', 'import', '-', '--json'], { dataDir: cli.dir, input: VALID });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)[0].created).toHaveLength(3);
  });

  it('several documents in one file: several schedules, errors prefixed with the document', () => {
    const two = `schedule: a\nroutines:\n  - { id: me@box:a, command: a, every: 5m }\n---\nschedule: b\nroutines:\n  - { id: me@box:b, command: b, every: 0s }\n`;
    const r = cli.tend('schedule', 'import', file(two));
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('tend: documents.1.routines.0.every: duration must be positive, got "0s"');
    const res = importFile(two.replace('every: 0s', 'every: 10m'));
    expect(res.map((x) => x.schedule)).toEqual(['a', 'b']);
  });
});

describe('schedule export', () => {
  it('export → import round-trips: nothing changes, and the definitions are equal', () => {
    importFile(`schedule: reports
mode: observe
max_parallel: 2
routines:
  - id: me@box:dl
    name: reports
    command: ./dl.sh
    args: [--password=hunter2, --out, data]
    env: { TOKEN: hunter2, LANG: C }
    cwd: /srv/reports
    runtimes: ["07:00", "19:00"]
    tz: Europe/Berlin
    retry: { every: 5m, for: 1h }
    timeout: 30m
    misfire: all
    overlap: queue-one
    tolerance: 10m
    log_cap: 16MiB
    outputs: [data/*.csv]
  - id: me@box:parse
    command: ./parse.sh
    every: 1h30m
    after: me@box:dl
  - id: me@box:once
    command: ./once.sh
    at: 2031-01-01T08:00
    tz: America/New_York
    retry: none
  - id: me@box:collector
    realtime: true
    command: ./collect.sh
    heartbeat: 1m
    grace: 2m
`);
    const showAll = () => ['me@box:dl', 'me@box:parse', 'me@box:once', 'me@box:collector'].map((id) => cli.ok<{ definition: unknown }>('routine', 'show', id, '--json').definition);
    const defs = showAll();
    const exported = cli.ok<string>('schedule', 'export', 'reports');
    expect(exported).toMatch(/^schedule: reports\nmode: observe\nmax_parallel: 2\nroutines:\n/);
    expect(exported).not.toContain('hunter2');

    const before = dbSnapshot(cli.dir);
    const res = importFile(exported);
    expect(res[0]).toMatchObject({ created: [], updated: [], removed: [] });
    expect(res[0]!.unchanged).toHaveLength(4);
    expect(showAll()).toEqual(defs);
    // Definitions, dependencies, triggers and schedules are as they were.
    const after = dbSnapshot(cli.dir);
    for (const table of ['routines', 'routine_deps', 'triggers', 'schedules']) expect(after[table], table).toEqual(before[table]);

    // Into a fresh data dir: the masked secrets are refused with their paths (they would be stored
    // as ***); given through the importer's environment, the same definitions result.
    const fresh = cliSandbox();
    try {
      const refused = fresh.tend('schedule', 'import', file(exported));
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('routines.0.args.0: holds a masked secret (***)');
      expect(refused.stderr).toContain('routines.0.env.TOKEN: holds a masked secret (***)');
      const withRefs = exported.replace('--password=***', '--password=${env:PW}').replace(/TOKEN: "?\*\*\*"?/, 'TOKEN: ${env:PW}');
      const given = runCli(['schedule', 'import', file(withRefs)], { dataDir: fresh.dir, env: { PW: 'hunter2' } });
      expect(given.code, given.stderr + withRefs).toBe(0);
      const copy = ['me@box:dl', 'me@box:parse', 'me@box:once', 'me@box:collector'].map((id) => fresh.ok<{ definition: unknown }>('routine', 'show', id, '--json').definition);
      expect(copy).toEqual(defs);
      expect(fresh.ok<string>('schedule', 'export', 'reports')).toBe(exported);
      expect(fresh.ok('schedule', 'list', '--json')).toEqual([{ name: 'reports', mode: 'observe', maxParallel: 2, routines: 4 }]);
    } finally {
      fresh.remove();
    }
  });

  it('without a name: every schedule, as a multi-document stream that imports back', () => {
    importFile('schedule: a\nroutines:\n  - { id: me@box:a, command: a, every: 5m }\n');
    importFile('schedule: b\nroutines:\n  - { id: me@box:b, command: b, cron: "0 * * * *" }\n');
    const all = cli.ok<string>('schedule', 'export');
    expect(all.split(/^---$/m)).toHaveLength(2);
    const res = importFile(all);
    expect(res.map((r) => [r.schedule, r.unchanged])).toEqual([['a', ['me@box:a']], ['b', ['me@box:b']]]);
  });

  it('an unknown schedule: exit 1 naming it', () => {
    const r = cli.tend('schedule', 'export', 'nope');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/schedule nope not found/);
  });
});

describe('schedule observe / activate', () => {
  it('switches the mode shown by schedule list and routine show', () => {
    importFile(VALID);
    expect(cli.ok('schedule', 'observe', 'reports', '--json')).toEqual({ schedule: 'reports', mode: 'observe' });
    expect(cli.ok('schedule', 'list', '--json')).toEqual([{ name: 'reports', mode: 'observe', maxParallel: null, routines: 3 }]);
    expect(cli.ok('routine', 'show', 'me@box:dl', '--json')).toMatchObject({ observeOnly: true });
    expect(cli.ok<string>('schedule', 'export', 'reports')).toMatch(/^mode: observe$/m);

    cli.ok('schedule', 'activate', 'reports');
    expect(cli.ok('schedule', 'list', '--json')).toEqual([{ name: 'reports', mode: 'active', maxParallel: null, routines: 3 }]);
    expect(cli.ok('routine', 'show', 'me@box:dl', '--json')).toMatchObject({ observeOnly: false });
  });

  it('importing a file without a mode keeps the current mode', () => {
    importFile(VALID);
    cli.ok('schedule', 'observe', 'reports');
    importFile(VALID);
    expect(cli.ok<{ mode: string }[]>('schedule', 'list', '--json')[0]!.mode).toBe('observe');
  });

  it('an unknown schedule: exit 1 naming it, nothing stored', () => {
    const before = dbSnapshot(cli.dir);
    const r = cli.tend('schedule', 'observe', 'nope');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/schedule nope not found/);
    expect(dbSnapshot(cli.dir)).toEqual(before);
  });
});

describe('the published JSON Schema and the example', () => {
  it('tend schedule schema prints exactly schemas/schedule.schema.json', () => {
    expect(cli.ok<string>('schedule', 'schema')).toBe(readFileSync(join(REPO, 'schemas', 'schedule.schema.json'), 'utf8'));
  });

  it('examples/daily-reports.yaml imports cleanly: download 07:00, parser after it, report after that, a realtime collector', () => {
    const res = cli.ok<ImportResult[]>('schedule', 'import', join(REPO, 'examples', 'daily-reports.yaml'), '--json');
    expect(res).toHaveLength(1);
    expect(res[0]!.schedule).toBe('daily-reports');
    expect(res[0]!.created).toHaveLength(4);
    const show = (id: string) =>
      cli.ok<{ kind: string; dependencies: string[]; definition: { timing: unknown; tz: string; heartbeatMs: number | null } }>('routine', 'show', `analyst@workstation:${id}`, '--json');
    expect(show('reports/download')).toMatchObject({ kind: 'batch', dependencies: [], definition: { timing: { mode: 'runtimes', runtimes: ['07:00'] }, tz: 'Europe/Berlin' } });
    expect(show('reports/parse').dependencies).toEqual(['analyst@workstation:reports/download']);
    expect(show('reports/report').dependencies).toEqual(['analyst@workstation:reports/parse']);
    expect(show('collectors/quotes')).toMatchObject({ kind: 'realtime', definition: { timing: null } });
    expect(show('collectors/quotes').definition.heartbeatMs).toBeGreaterThan(0);
    // And once more: nothing to change.
    const again = cli.ok<ImportResult[]>('schedule', 'import', join(REPO, 'examples', 'daily-reports.yaml'), '--json');
    expect(again[0]!.unchanged).toHaveLength(4);
  });
});
