import type { Command } from 'commander';
import { action, cliSettings, dataDirPath } from '../io.js';

export function register(program: Command): void {
  program
    .command('mcp')
    .description("serve Tend's state to agents over the Model Context Protocol (stdio): what ran, what failed, what is waiting and why")
    .option('--allow-actions', 'also offer action tools (run, restart, stop, pause, resume, post and cancel jobs), carried out by the running daemon')
    .action(
      action(async (o: { allowActions?: boolean }) => {
        const { runMcpStdio } = await import('../../engine/mcp/stdio.js');
        await runMcpStdio({ dataDir: await dataDirPath(), allowActions: !!o.allowActions, settings: await cliSettings() });
      }),
    );
}
