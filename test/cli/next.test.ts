// `tend next`: the next instants a timing fires, as a JSON array of ISO 8601 UTC strings.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbSnapshot } from './db-snapshot.js';
import { cliSandbox } from './run-cli.js';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let cli: ReturnType<typeof cliSandbox>;
beforeAll(() => {
  cli = cliSandbox();
});
afterAll(() => cli.remove());

const next = (...args: string[]) => cli.ok<string[]>('next', ...args, '--json');

describe('tend next --json', () => {
  it('--cron in a time zone, across the spring DST change', () => {
    expect(next('--cron', '0 7 * * *', '--tz', 'Europe/Berlin', '--after', '2026-03-28T00:00:00Z', '--count', '3')).toEqual([
      '2026-03-28T06:00:00.000Z',
      '2026-03-29T05:00:00.000Z',
      '2026-03-30T05:00:00.000Z',
    ]);
  });

  it('--runtimes: each HH:MM of each day', () => {
    expect(next('--runtimes', '07:00,19:30', '--tz', 'UTC', '--after', '2026-01-01T00:00:00Z', '--count', '3')).toEqual([
      '2026-01-01T07:00:00.000Z',
      '2026-01-01T19:30:00.000Z',
      '2026-01-02T07:00:00.000Z',
    ]);
  });

  it('--every: from --after', () => {
    expect(next('--every', '90m', '--after', '2026-01-01T00:00:00Z', '--count', '2')).toEqual(['2026-01-01T01:30:00.000Z', '2026-01-01T03:00:00.000Z']);
  });

  it('--at: one instant, a local time read in --tz; --after without an offset is local too', () => {
    expect(next('--at', '2030-07-01T10:00', '--tz', 'America/New_York')).toEqual(['2030-07-01T14:00:00.000Z']);
    expect(next('--at', '2030-07-01T10:00:00+02:00', '--tz', 'UTC', '--count', '5')).toEqual(['2030-07-01T08:00:00.000Z']);
  });

  it('--in: one instant this long after --after', () => {
    expect(next('--in', '2h', '--after', '2026-01-01T00:00:00Z')).toEqual(['2026-01-01T02:00:00.000Z']);
  });

  it('defaults: five instants after now', () => {
    const before = Date.now();
    const out = next('--every', '1m');
    expect(out).toHaveLength(5);
    for (const t of out) expect(t).toMatch(ISO_UTC);
    expect(Date.parse(out[0]!)).toBeGreaterThanOrEqual(before + 60_000);
  });

  it('without --json: one instant per line', () => {
    expect(cli.ok<string>('next', '--cron', '0 0 1 1 *', '--tz', 'UTC', '--after', '2026-06-01T00:00:00Z', '--count', '2')).toBe('2027-01-01T00:00:00.000Z\n2028-01-01T00:00:00.000Z\n');
  });
});

describe('tend next: bad input is exit 2, one line per problem naming the option', () => {
  const bad = (args: string[], lines: RegExp[]) => {
    const r = cli.tend('next', ...args, '--json');
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    const got = r.stderr.trimEnd().split('\n');
    expect(got, r.stderr).toHaveLength(lines.length);
    lines.forEach((re, i) => expect(got[i]).toMatch(re));
  };

  it.each<[string, string[], RegExp[]]>([
    ['no timing', [], [/^tend: --cron\/--runtimes\/--every\/--at\/--in: one timing mode is required$/]],
    ['two timings', ['--every', '5m', '--cron', '* * * * *'], [/^tend: --cron\/--every: use exactly one timing mode, got 2$/]],
    ['a bad cron', ['--cron', '0 25 * * *'], [/^tend: --cron: hour: 25 is out of range/]],
    ['an unknown tz', ['--every', '5m', '--tz', 'Nowhere/City'], [/^tend: --tz: unknown time zone "Nowhere\/City"/]],
    ['a zero duration', ['--every', '0s'], [/^tend: --every: duration must be positive/]],
    ['a garbage duration', ['--in', 'soonish'], [/^tend: --in: duration "soonish"/]],
    ['bad runtimes', ['--runtimes', '25:00'], [/^tend: --runtimes: /]],
    ['a bad --at', ['--at', 'noon'], [/^tend: --at: /]],
    ['an --at in the past', ['--at', '2020-01-01T00:00:00Z'], [/^tend: --at: 2020-01-01T00:00:00\.000Z is in the past \(before now\): it would never fire$/]],
    ['a bad --after', ['--every', '5m', '--after', 'yesterday'], [/^tend: --after: /]],
    ['a bad --count', ['--every', '5m', '--count', 'many'], [/^tend: --count: expected a whole number from 1 to 1000, got "many"$/]],
    ['a zero --count', ['--every', '5m', '--count', '0'], [/^tend: --count: /]],
    ['several at once', ['--cron', 'x', '--tz', 'Nope', '--count', '-1'], [/^tend: --tz: /, /^tend: --count: /, /^tend: --cron: /]],
  ])('%s', (_name, args, lines) => bad(args, lines));

  it('never touches the store', () => {
    cli.ok('routine', 'list');
    const before = dbSnapshot(cli.dir);
    next('--every', '5m');
    expect(dbSnapshot(cli.dir)).toEqual(before);
  });
});
