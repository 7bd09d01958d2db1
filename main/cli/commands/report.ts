import type { Command } from 'commander';
import type { ExternalResult } from '../../../contract/worker-protocol.js';
import { action, dataDirPath, print, usage } from '../io.js';

export function register(program: Command): void {
  program
    .command('report <routine-id> <action>')
    .description('from an external routine: report start | heartbeat | complete | fail | log to the daemon')
    .option('--run-id <id>', 'keep overlapping runs apart')
    .option('--exit-code <n>', 'with fail: the exit code')
    .option('--message <text>', 'a short message (with log: the text)')
    .option('--server <url>', 'daemon API address (default: $TEND_SERVER, else the local api.json)')
    .option('--token <token>', 'token (default: $TEND_TOKEN, else the local api.json)')
    .option('--json', 'machine-readable output')
    .action(
      action(async (id: string, act: string, o: { runId?: string; exitCode?: string; message?: string; server?: string; token?: string; json?: boolean }) => {
        if (!['start', 'heartbeat', 'complete', 'fail', 'log'].includes(act)) usage('action', `one of start, heartbeat, complete, fail, log — got "${act}"`);
        const body: Record<string, unknown> = {};
        if (o.runId) body.runId = o.runId;
        if (o.message !== undefined) body.message = o.message;
        if (o.exitCode !== undefined) {
          const n = Number(o.exitCode);
          if (!Number.isSafeInteger(n) || n < 0 || n > 255) usage('--exit-code', `0 to 255, got "${o.exitCode}"`);
          body.exitCode = n;
        }
        let server = o.server ?? process.env.TEND_SERVER;
        let token = o.token ?? process.env.TEND_TOKEN;
        if (!server || !token) {
          const { readApiFile } = await import('../../engine/api/auth.js');
          const api = readApiFile(await dataDirPath());
          server ??= api?.url;
          token ??= api?.token;
        }
        if (!server || !token) usage('--server', 'no daemon address: give --server and --token (or TEND_SERVER and TEND_TOKEN), or run on the daemon host');
        const { expandRoutineId } = await import('../../engine/domain/schema.js');
        const { workerApi } = await import('../../../worker/remote/client.js');
        const full = expandRoutineId(id);
        const value = await workerApi(server, token).request<ExternalResult>('POST', `/api/external/${encodeURIComponent(full)}/${act}`, body, { what: `${full} ${act}` });
        print(o.json, value, () => `${full}: ${act} reported${value.runId ? ` (run ${value.runId}, ${value.status})` : ''}`);
      }),
    );
}
