// Bad input anywhere: exit code 2, one line per problem naming the field, and nothing stored —
// not a routine, a trigger, a schedule, a job, a run or an event (the whole database is compared).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { dbSnapshot } from './db-snapshot.js';
import { cliSandbox, type CliResult } from './run-cli.js';

// Every test starts from a copy of one data dir holding something to depend on and to collide with.
let template: ReturnType<typeof cliSandbox>;
let listBefore: unknown;
beforeAll(() => {
  template = cliSandbox();
  template.ok('routine', 'add', 'me@box:dl', '--runtimes', '07:00', '--tz', 'UTC', '--', './dl.sh');
  template.ok('routine', 'add', 'me@box:parse', '--runtimes', '07:30', '--tz', 'UTC', '--after', 'me@box:dl', '--', './parse.sh');
  listBefore = template.ok('routine', 'list', '--json');
  expect(listBefore).toHaveLength(2);
});
afterAll(() => template.remove());

let cli: ReturnType<typeof cliSandbox>;
beforeEach(() => {
  cli = cliSandbox(template.dir);
});
afterEach(() => cli.remove());

/** Runs a command that must be refused; checks the exit code, the lines and that nothing changed. */
function refused(args: string[], expected: RegExp[]): CliResult {
  const before = dbSnapshot(cli.dir);
  const r = cli.tend(...args);
  expect(r.code, `tend ${args.join(' ')}\n${r.stderr}`).toBe(2);
  expect(r.stdout).toBe('');
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, r.stderr).toHaveLength(expected.length);
  expected.forEach((re, i) => expect(lines[i]).toMatch(re));
  expect(cli.ok('routine', 'list', '--json')).toEqual(listBefore);
  expect(dbSnapshot(cli.dir)).toEqual(before);
  return r;
}

const add = (...flags: string[]) => ['routine', 'add', 'me@box:new', ...flags];

describe('routine add: refused with exit 2, one line per problem, nothing stored', () => {
  it('a cron expression with the wrong number of fields', () => {
    refused(add('--cron', 'every morning', '--', 'x'), [/^tend: --cron: expected 5 fields, got 2/]);
  });

  it('a cron field out of range', () => {
    refused(add('--cron', '61 * * * *', '--', 'x'), [/^tend: --cron: minute: 61 is out of range 0-59$/]);
  });

  it('an unknown time zone (named in the message)', () => {
    refused(add('--every', '5m', '--tz', 'Mars/Olympus_Mons', '--', 'x'), [/^tend: --tz: unknown IANA time zone "Mars\/Olympus_Mons"/]);
  });

  it.each([
    ['0s', /^tend: --every: duration must be positive, got "0s"$/],
    ['-5m', /^tend: --every: duration must be positive, got "-5m"$/],
    ['banana', /^tend: --every: duration "banana" is not a number with a unit/],
    ['5', /^tend: --every: duration "5" has no unit/],
  ])('a bad duration: --every %s', (value, re) => {
    refused(add('--every', value, '--', 'x'), [re]);
  });

  it('bad durations in other fields are named by their flag', () => {
    refused(add('--every', '5m', '--timeout', 'soon', '--tolerance', '0m', '--', 'x'), [/^tend: --timeout: duration "soon"/, /^tend: --tolerance: duration must be positive/]);
  });

  it('two timing modes', () => {
    refused(add('--every', '5m', '--cron', '0 * * * *', '--', 'x'), [/^tend: --every: only one timing mode allowed, got cron and every$/]);
  });

  it('no timing mode for a batch routine', () => {
    refused(add('--', 'x'), [/^tend: a batch routine needs exactly one timing: runtimes, cron, every, at or in$/]);
  });

  it('a realtime routine with a timing', () => {
    refused(add('--realtime', '--every', '5m', '--', 'x'), [/^tend: --every: realtime routines run continuously and take no timing$/]);
  });

  it('no command', () => {
    refused(add('--every', '5m'), [/^tend: command: give the command after --/]);
  });

  it('an unknown dependency', () => {
    refused(add('--every', '5m', '--after', 'me@box:ghost', '--', 'x'), [/^tend: --after: unknown dependency me@box:ghost: no routine with that id in schedule default$/]);
  });

  it('a dependency in another schedule', () => {
    refused(add('--every', '5m', '--schedule', 'other', '--after', 'me@box:dl', '--', 'x'), [/^tend: --after: dependency me@box:dl is in schedule default, not other/]);
  });

  it('a dependency on itself', () => {
    refused(add('--every', '5m', '--after', 'me@box:new', '--', 'x'), [/^tend: --after: a routine cannot depend on itself$/]);
  });

  it('a dependency cycle made by an edit: the message names the cycle', () => {
    refused(['routine', 'edit', 'me@box:dl', '--after', 'me@box:parse'], [/^tend: --after: dependency cycle: me@box:dl → me@box:parse → me@box:dl$/]);
  });

  it.each([['FOO'], ['=x'], ['1X=y']])('a bad --env %s', (kv) => {
    refused(add('--every', '5m', '--env', kv, '--', 'x'), [/^tend: --env: /]);
  });

  it('bad policies: misfire, overlap, retry, log cap, grace', () => {
    refused(add('--every', '5m', '--misfire', 'sometimes', '--', 'x'), [/^tend: --misfire: .*"skip"\|"once"\|"all"/]);
    refused(add('--every', '5m', '--overlap', 'never', '--', 'x'), [/^tend: --overlap: .*"skip"\|"queue-one"\|"allow"/]);
    refused(add('--every', '5m', '--retry', 'often', '--', 'x'), [/^tend: --retry: expected "none" or EVERY\/FOR/]);
    refused(add('--every', '5m', '--log-cap', '12', '--', 'x'), [/^tend: --log-cap: size must be at least 4KiB/]);
    refused(add('--realtime', '--grace', '10m', '--', 'x'), [/^tend: --grace: startup grace is at most 5m: it is how long after a start heartbeat silence does not count yet/]);
  });

  it('a heartbeat on a batch routine', () => {
    refused(add('--every', '5m', '--heartbeat', '30s', '--', 'x'), [/^tend: --heartbeat: only realtime routines heartbeat$/]);
  });

  it('an --at that is not a time', () => {
    refused(add('--at', 'tomorrow-ish', '--', 'x'), [/^tend: --at: /]);
  });

  it('several problems at once: one line each', () => {
    refused(add('--every', '0s', '--tz', 'Nowhere/City', '--misfire', 'maybe', '--', 'x'), [/^tend: --every: /, /^tend: --tz: /, /^tend: --misfire: /]);
  });

  it('an unknown option or a missing id is a usage error (exit 2)', () => {
    const before = dbSnapshot(cli.dir);
    const r = cli.tend('routine', 'add', 'me@box:new', '--bogus', '--', 'x');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown option '--bogus'/);
    expect(cli.tend('routine', 'add').code).toBe(2);
    expect(dbSnapshot(cli.dir)).toEqual(before);
  });

  it('a bad --wait is refused before a run is queued', () => {
    refused(['routine', 'run', 'me@box:dl', '--wait', 'abc'], [/^tend: --wait: duration "abc"/]);
  });
});

describe('schedule import: refused with exit 2, nothing stored', () => {
  it('an unknown schedule mode', () => {
    const file = join(cli.dir, 'ops.yaml');
    writeFileSync(file, 'schedule: ops\nmode: sometimes\nroutines:\n  - id: me@box:ops\n    every: 5m\n    command: x\n');
    refused(['schedule', 'import', file], [/^tend: mode: .*"active"\|"observe"/]);
  });
});

describe('routine add: what grace and revision mean', () => {
  let box: ReturnType<typeof cliSandbox>;
  beforeEach(() => {
    box = cliSandbox();
  });
  afterEach(() => box.remove());

  it('--grace on a batch routine is explained: it is a realtime startup grace', () => {
    const r = box.tend('routine', 'add', 'me@box:b', '--every', '1h', '--grace', '1m', '--', 'true');
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('tend: --grace: startup grace is for realtime routines (how long after a start heartbeat silence does not count); a late batch run is governed by tolerance\n');
    expect(box.ok<unknown[]>('routine', 'list', '--json')).toEqual([]);
  });

  it('--revision that is not a commit sha is refused at add time', () => {
    const r = box.tend('routine', 'add', 'me@box:b', '--every', '1h', '--revision', 'nothex', '--', 'true');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^tend: --revision: a commit sha: 4 to 64 hex digits/);
    expect(box.tend('routine', 'add', 'me@box:b', '--every', '1h', '--revision', '3f2a9c1', '--', 'true').code).toBe(0);
  });
});
