import type { Command } from 'commander';
import { action, usage } from '../io.js';

export function register(program: Command): void {
  program
    .command('heartbeat')
    .description('from inside a routine: tell Tend it is alive (finds its run from TEND_RUN_DIR)')
    .action(
      action(async () => {
        const dir = process.env.TEND_RUN_DIR;
        if (!dir) usage('TEND_RUN_DIR', 'not set: tend heartbeat is called from inside a routine Tend started (external routines use tend report)');
        const { closeSync, openSync, utimesSync } = await import('node:fs');
        const { join } = await import('node:path');
        const file = join(dir, 'heartbeat');
        closeSync(openSync(file, 'a', 0o600));
        const now = new Date();
        utimesSync(file, now, now);
      }),
    );
}
