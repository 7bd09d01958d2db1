import type { Command } from 'commander';
import { action, dataDirPath } from '../io.js';

export function register(program: Command): void {
  const daemon = program.command('daemon').description('the headless scheduler that owns the data dir');

  daemon
    .command('run')
    .description('run the scheduler in the foreground (TEND_DAEMON_INTERVAL_MS, default 1000)')
    .action(
      action(async () => {
        const { runDaemon } = await import('../../engine/daemon/run.js');
        const code = await runDaemon({ dataDir: await dataDirPath() });
        process.exitCode = code;
      }),
    );
}
