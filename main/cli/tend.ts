#!/usr/bin/env node
// The `tend` command. Each command module registers itself and loads its implementation only
// when run, so `tend daemon status` costs little more than starting Node.
import { Command } from 'commander';
import { register as registerDaemon } from './commands/daemon.js';
import { register as registerHeartbeat } from './commands/heartbeat.js';
import { register as registerJob } from './commands/job.js';
import { register as registerNext } from './commands/next.js';
import { register as registerLogs } from './commands/logs.js';
import { register as registerReport } from './commands/report.js';
import { register as registerRoutine, registerControl } from './commands/routine.js';
import { register as registerSchedule } from './commands/schedule.js';
import { register as registerService } from './commands/service.js';
import { register as registerWorker } from './commands/worker.js';
import { register as registerMcp } from './commands/mcp.js';
import { register as registerWebhook } from './commands/webhook.js';
import { fail } from './io.js';
import { tendVersion } from '../engine/version.js';

const program = new Command('tend')
  .description('Tend: routines on time, realtime routines kept alive, one-off batch jobs — nothing orphaned or repeated.\nData dir: $TEND_DATA_DIR, else the platform user data dir.')
  .version(tendVersion(), '-V, --version')
  .showHelpAfterError('(run with --help for usage)')
  .configureOutput({ outputError: (str, write) => write(str) });

program.exitOverride();
registerRoutine(program);
registerControl(program);
registerLogs(program);
registerHeartbeat(program);
registerSchedule(program);
registerJob(program);
registerDaemon(program);
registerService(program);
registerWorker(program);
registerReport(program);
registerNext(program);
registerMcp(program);
registerWebhook(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  const e = err as { code?: string; exitCode?: number };
  if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') process.exitCode = 0;
  else if (e.code?.startsWith('commander.')) process.exitCode = 2; // usage errors: commander printed them
  else fail(err);
}
