import { Command } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { register } from '../../main/cli/commands/next.js';

async function tend(...args: string[]): Promise<{ out: string; err: string; code: number | string | undefined }> {
  let out = '';
  let err = '';
  const program = new Command('tend');
  program.exitOverride();
  program.configureOutput({ writeOut: (s) => (out += s), writeErr: (s) => (err += s) });
  register(program);
  process.exitCode = undefined;
  await program.parseAsync(['node', 'tend', 'next', ...args]);
  const code = process.exitCode;
  process.exitCode = undefined;
  return { out, err, code };
}

afterEach(() => {
  process.exitCode = undefined;
});

describe('tend next', () => {
  it('prints the next N cron instants as a JSON array of UTC ISO strings', async () => {
    const r = await tend('--cron', '0 9 * * *', '--tz', 'UTC', '--after', '2025-06-10T12:00:00Z', '--count', '3', '--json');
    expect(r.err).toBe('');
    expect(r.code).toBeUndefined();
    expect(JSON.parse(r.out)).toEqual(['2025-06-11T09:00:00.000Z', '2025-06-12T09:00:00.000Z', '2025-06-13T09:00:00.000Z']);
  });

  it('prints one instant per line without --json, 5 by default', async () => {
    const r = await tend('--every', '30m', '--tz', 'UTC', '--after', '2025-06-10T12:00:00Z');
    expect(r.out).toBe(
      [
        '2025-06-10T12:30:00.000Z',
        '2025-06-10T13:00:00.000Z',
        '2025-06-10T13:30:00.000Z',
        '2025-06-10T14:00:00.000Z',
        '2025-06-10T14:30:00.000Z',
      ].join('\n') + '\n',
    );
  });

  it('runtimes in a zone, across spring-forward', async () => {
    const r = await tend('--runtimes', '02:30', '--tz', 'America/New_York', '--after', '2025-03-08T12:00:00Z', '--count', '2', '--json');
    expect(JSON.parse(r.out)).toEqual(['2025-03-09T07:00:00.000Z', '2025-03-10T06:30:00.000Z']);
  });

  it('--after without an offset is local to --tz', async () => {
    const r = await tend('--cron', '0 9 * * *', '--tz', 'America/New_York', '--after', '2025-06-10T08:00', '--count', '1', '--json');
    expect(JSON.parse(r.out)).toEqual(['2025-06-10T13:00:00.000Z']);
  });

  it('--at gives one instant (local to --tz without an offset)', async () => {
    const r = await tend('--at', '2025-06-10T14:00', '--tz', 'Europe/Berlin', '--after', '2025-06-10T00:00:00Z', '--json');
    expect(JSON.parse(r.out)).toEqual(['2025-06-10T12:00:00.000Z']);
  });

  it('--at in the past is refused: it would never fire', async () => {
    const r = await tend('--at', '2020-01-01T00:00:00Z', '--after', '2025-06-10T00:00:00Z', '--json');
    expect(r.out).toBe('');
    expect(r.err).toBe('tend: --at: 2020-01-01T00:00:00.000Z is in the past (before --after): it would never fire\n');
    expect(r.code).toBe(2);
  });

  it('--in counts from --after', async () => {
    const r = await tend('--in', '90m', '--after', '2025-06-10T12:00:00Z', '--json');
    expect(JSON.parse(r.out)).toEqual(['2025-06-10T13:30:00.000Z']);
  });

  it('without --after it starts from now', async () => {
    const before = Date.now();
    const r = await tend('--every', '1h', '--count', '1', '--json');
    const [first] = JSON.parse(r.out) as string[];
    expect(Date.parse(first!) - before).toBeGreaterThanOrEqual(3_600_000);
    expect(Date.parse(first!) - before).toBeLessThan(3_600_000 + 60_000);
  });
});

describe('tend next rejects bad input: one line per problem, exit code 2', () => {
  it.each([
    [['--cron', '0 * * * * *'], ['tend: --cron: expected 5 fields, got 6 (minute hour day-of-month month day-of-week)']],
    [['--cron', '61 * * * *'], ['tend: --cron: minute: 61 is out of range 0-59']],
    [['--runtimes', '25:00'], ['tend: --runtimes: "25:00": hour 25 is out of range 00-23']],
    [['--every', '0s'], ['tend: --every: duration must be positive, got "0s"']],
    [['--every=-5m'], ['tend: --every: duration must be positive, got "-5m"']],
    [['--in', 'soon'], ['tend: --in: duration "soon" is not a number with a unit (use 500ms, 30s, 5m, 2h or 1d)']],
    [['--at', 'next tuesday'], [/^tend: --at: "next tuesday" is not an ISO 8601 date-time/]],
    [[], ['tend: --cron/--runtimes/--every/--at/--in: one timing mode is required']],
    [['--cron', '* * * * *', '--every', '5m'], ['tend: --cron/--every: use exactly one timing mode, got 2']],
  ])('%j', async (args, lines) => {
    const r = await tend(...args, '--tz', 'UTC', '--after', '2025-06-10T12:00:00Z');
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    const got = r.err.trimEnd().split('\n');
    expect(got).toHaveLength(lines.length);
    lines.forEach((line, i) => (typeof line === 'string' ? expect(got[i]).toBe(line) : expect(got[i]).toMatch(line)));
  });

  it('reports every problem at once', async () => {
    const r = await tend('--cron', '* * *', '--tz', 'Mars/Base', '--count', '0', '--after', 'yesterday');
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err.trimEnd().split('\n')).toEqual([
      'tend: --tz: unknown time zone "Mars/Base" (use an IANA name such as Europe/Berlin or UTC)',
      'tend: --count: expected a whole number from 1 to 1000, got "0"',
      expect.stringMatching(/^tend: --after: "yesterday" is not an ISO 8601 date-time/),
      'tend: --cron: expected 5 fields, got 3 (minute hour day-of-month month day-of-week)',
    ]);
  });
});
