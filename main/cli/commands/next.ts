// `tend next`: preview the next instants a timing fires, as ISO 8601 UTC.
//
//   tend next (--cron E | --runtimes L | --every D | --at T | --in D)
//             [--tz ZONE] [--after ISO] [--count N] [--json]
//
// Bad input prints one line per problem, naming the option, and sets exit code 2.

import type { Command } from 'commander';
import type { Timing } from '../../engine/domain/types.js';
import { parseDuration } from '../../engine/timing/duration.js';
import { nextRuns, parseAt, parseRuntimes, resolveIn, validateCron } from '../../engine/timing/next.js';
import { isValidTimeZone, machineTimeZone } from '../../engine/timing/tz.js';

interface NextOptions {
  cron?: string;
  runtimes?: string;
  every?: string;
  at?: string;
  in?: string;
  tz?: string;
  after?: string;
  count: string;
  json?: boolean;
}

const MODES = ['cron', 'runtimes', 'every', 'at', 'in'] as const;
const MAX_COUNT = 1000;

export function register(program: Command): void {
  program
    .command('next')
    .description('show the next instants a timing fires (ISO 8601, UTC)')
    .option('--cron <expr>', '5-field cron expression, in --tz')
    .option('--runtimes <list>', 'daily local times, e.g. 07:00,19:30')
    .option('--every <duration>', 'interval from --after, e.g. 30m')
    .option('--at <iso>', 'one instant, ISO 8601; without an offset it is local to --tz')
    .option('--in <duration>', 'one instant this long after --after, e.g. 90m')
    .option('--tz <zone>', "IANA time zone (default: this machine's)")
    .option('--after <iso>', 'reference instant (default: now); without an offset it is local to --tz')
    .option('--count <n>', 'how many instants', '5')
    .option('--json', 'print a JSON array')
    .action((opts: NextOptions, cmd: Command) => {
      const out = cmd.configureOutput();
      const writeOut = out.writeOut ?? ((s: string) => process.stdout.write(s));
      const writeErr = out.writeErr ?? ((s: string) => process.stderr.write(s));
      const result = plan(opts, Date.now());
      if ('problems' in result) {
        for (const p of result.problems) writeErr(`tend: ${p}\n`);
        process.exitCode = 2;
        return;
      }
      let runs: number[];
      try {
        runs = nextRuns(result.timing, result.afterMs, result.tz, result.count);
      } catch (err) {
        writeErr(`tend: ${err instanceof Error ? err.message : String(err)}\n`);
        process.exitCode = 2;
        return;
      }
      const iso = runs.map((t) => new Date(t).toISOString());
      if (opts.json) writeOut(`${JSON.stringify(iso)}\n`);
      else if (iso.length > 0) writeOut(`${iso.join('\n')}\n`);
    });
}

type Plan = { timing: Timing; afterMs: number; tz: string; count: number } | { problems: string[] };

/** Validate every option, collecting all problems rather than stopping at the first. */
function plan(opts: NextOptions, nowMs: number): Plan {
  const problems: string[] = [];
  const why = (err: unknown): string => (err instanceof Error ? err.message : String(err));

  let tz = opts.tz ?? machineTimeZone();
  if (!isValidTimeZone(tz)) {
    problems.push(`--tz: unknown time zone ${JSON.stringify(tz)} (use an IANA name such as Europe/Berlin or UTC)`);
    tz = 'UTC'; // keep checking the other options
  }

  const countText = String(opts.count).trim();
  const count = /^\d+$/.test(countText) ? Number(countText) : NaN;
  if (!(count >= 1 && count <= MAX_COUNT)) {
    problems.push(`--count: expected a whole number from 1 to ${MAX_COUNT}, got ${JSON.stringify(opts.count)}`);
  }

  let afterMs = nowMs;
  if (opts.after !== undefined) {
    try {
      afterMs = parseAt(opts.after, tz);
    } catch (err) {
      problems.push(`--after: ${why(err)}`);
    }
  }

  const given = MODES.filter((m) => opts[m] !== undefined);
  if (given.length !== 1) {
    problems.push(
      given.length === 0
        ? `${MODES.map((m) => `--${m}`).join('/')}: one timing mode is required`
        : `${given.map((m) => `--${m}`).join('/')}: use exactly one timing mode, got ${given.length}`,
    );
  }

  let timing: Timing | null = null;
  if (opts.cron !== undefined) {
    const bad = validateCron(opts.cron);
    if (bad) problems.push(`--cron: ${bad}`);
    else timing = { mode: 'cron', cron: opts.cron.trim() };
  }
  if (opts.runtimes !== undefined) {
    try {
      timing = { mode: 'runtimes', runtimes: parseRuntimes(opts.runtimes) };
    } catch (err) {
      problems.push(`--runtimes: ${why(err)}`);
    }
  }
  if (opts.every !== undefined) {
    try {
      timing = { mode: 'every', everyMs: parseDuration(opts.every) };
    } catch (err) {
      problems.push(`--every: duration ${why(err)}`);
    }
  }
  if (opts.at !== undefined) {
    try {
      const atMs = parseAt(opts.at, tz);
      // A one-shot in the past never fires: say so rather than print nothing.
      if (atMs <= afterMs) problems.push(`--at: ${new Date(atMs).toISOString()} is in the past (before ${opts.after === undefined ? 'now' : '--after'}): it would never fire`);
      else timing = { mode: 'at', at: new Date(atMs).toISOString() };
    } catch (err) {
      problems.push(`--at: ${why(err)}`);
    }
  }
  if (opts.in !== undefined) {
    try {
      timing = { mode: 'at', at: resolveIn(opts.in, afterMs) };
    } catch (err) {
      problems.push(`--in: duration ${why(err)}`);
    }
  }

  if (problems.length > 0 || timing === null) return { problems };
  return { timing, afterMs, tz, count };
}
