import type { Command } from 'commander';
import type { Store } from '../../engine/store/store.js';
import { action, cliSettings, dataDirPath } from '../io.js';

export function register(program: Command): void {
  program
    .command('mcp')
    .description("serve Tend's state to agents over the Model Context Protocol (stdio): what ran, what failed, what is waiting and why")
    .option('--allow-actions', 'also offer action tools (run, restart, stop, pause, resume, post and cancel jobs), carried out by the running daemon')
    .action(
      action(async (o: { allowActions?: boolean }) => {
        const [{ runMcpStdio }, { standaloneBackends }, { runFiles }] = await Promise.all([
          import('../../engine/mcp/stdio.js'),
          import('../../engine/host/backends.js'),
          import('../../engine/run-files.js'),
        ]);
        const dataDir = await dataDirPath();
        const settings = await cliSettings();
        // Each run's output is read through the backend that ran it, as the daemon reads it.
        const filesOver = (store: Store) => {
          const backends = standaloneBackends(dataDir, store, settings);
          return runFiles((name) => backends.get(name));
        };
        await runMcpStdio({ dataDir, allowActions: !!o.allowActions, settings, runFiles: filesOver });
      }),
    );
}
