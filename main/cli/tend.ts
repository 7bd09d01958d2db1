#!/usr/bin/env node
// The `tend` command. Only the module of the command being run is loaded, and it loads its
// implementation only when run, so `tend daemon status` costs little more than starting Node.
import './daemon-v8.js';
import { Command } from 'commander';
import { fail } from './io.js';
import { tendVersion } from '../engine/version.js';

type Registrar = (program: Command) => void;

/** Each top-level command and the module that registers it, loaded only when that command runs. */
const COMMANDS: Record<string, () => Promise<Registrar[]>> = {
  routine: async () => {
    const m = await import('./commands/routine.js');
    return [m.register, m.registerControl];
  },
  logs: async () => [(await import('./commands/logs.js')).register],
  heartbeat: async () => [(await import('./commands/heartbeat.js')).register],
  schedule: async () => [(await import('./commands/schedule.js')).register],
  job: async () => [(await import('./commands/job.js')).register],
  daemon: async () => [(await import('./commands/daemon.js')).register],
  service: async () => [(await import('./commands/service.js')).register],
  worker: async () => [(await import('./commands/worker.js')).register],
  report: async () => [(await import('./commands/report.js')).register],
  next: async () => [(await import('./commands/next.js')).register],
  mcp: async () => [(await import('./commands/mcp.js')).register],
  webhook: async () => [(await import('./commands/webhook.js')).register],
};

const program = new Command('tend')
  .description('Tend: routines on time, realtime routines kept alive, one-off batch jobs — nothing orphaned or repeated.\nData dir: $TEND_DATA_DIR, else the platform user data dir.')
  .version(tendVersion(), '-V, --version')
  .showHelpAfterError('(run with --help for usage)')
  .configureOutput({ outputError: (str, write) => write(str) });

program.exitOverride();

// Not top-level await: the CLI bundle is CommonJS (scripts/bundle-cli.mjs), which has none.
async function main(): Promise<void> {
  // The first word names the command: only its module is loaded. Anything else (help, a typo, an
  // option first) loads them all, so help lists every command and commander names the mistake.
  const first = process.argv[2];
  const wanted = first !== undefined && Object.hasOwn(COMMANDS, first) ? [first] : Object.keys(COMMANDS);
  for (const registrars of await Promise.all(wanted.map((name) => (COMMANDS[name] as () => Promise<Registrar[]>)()))) {
    for (const r of registrars) r(program);
  }

  try {
    await program.parseAsync(process.argv);
  } catch (err) {
    const e = err as { code?: string; exitCode?: number };
    if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') process.exitCode = 0;
    else if (e.code?.startsWith('commander.')) process.exitCode = 2; // usage errors: commander printed them
    else fail(err);
  }
}
void main();
