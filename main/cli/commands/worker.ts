import type { Command } from 'commander';
import { action, cliSettings, cliSettingsRead, dataDirPath, print, usage, withStore } from '../io.js';

const COMPUTER = /^[^@\s:]+@[^@\s:]+$/;

export function register(program: Command): void {
  const worker = program
    .command('worker')
    .description('run this host as a worker of a Tend daemon: tend worker --server URL --token TOKEN --computer user@HOST')
    .option('--server <url>', 'the daemon API address (from its api.json)')
    .option('--token <token>', 'the worker token (tend worker token user@HOST, on the daemon host); or $TEND_WORKER_TOKEN')
    .option('--computer <user@HOST>', 'the computer this worker serves')
    .option('--batchjobs <n>', 'free slots for one-off batch jobs (0: routines only)', '0')
    .option('--data-dir <dir>', "this worker's job directories and ledger (default: <data dir>/worker)")
    .action(
      action(async (o: { server?: string; token?: string; computer?: string; batchjobs: string; dataDir?: string }) => {
        const token = o.token ?? process.env.TEND_WORKER_TOKEN;
        if (!o.server) usage('--server', 'required: the daemon API address, e.g. http://10.0.0.5:7478');
        try {
          new URL(o.server);
        } catch {
          usage('--server', `not a URL: ${o.server}`);
        }
        if (!token) usage('--token', 'required (or set TEND_WORKER_TOKEN)');
        if (!o.computer || !COMPUTER.test(o.computer)) usage('--computer', 'required, like user@HOST');
        const slots = Number(o.batchjobs);
        if (!Number.isSafeInteger(slots) || slots < 0 || slots > 1000) usage('--batchjobs', `a number of slots from 0 to 1000, got "${o.batchjobs}"`);
        const [{ WorkerAgent }, { tendVersion }, { join, resolve }, { waiterTools }] = await Promise.all([
          import('../../../worker/remote/agent.js'),
          import('../../engine/version.js'),
          import('node:path'),
          import('../../engine/host/backends.js'),
        ]);
        const dir = o.dataDir ? resolve(o.dataDir) : join(await dataDirPath(), 'worker');
        const { settings, problems } = await cliSettingsRead();
        const badKeep = problems.find((p) => p.knob === 'TEND_KEEP_DAYS');
        if (badKeep) usage('TEND_KEEP_DAYS', badKeep.message.replace(/^TEND_KEEP_DAYS /, ''));
        const agent = new WorkerAgent({
          server: o.server,
          token,
          computer: o.computer,
          batchSlots: slots,
          dataDir: dir,
          version: tendVersion(),
          keepDays: settings.keepDays,
          tools: waiterTools(settings),
          log: (line) => process.stderr.write(`${new Date().toISOString()} ${line}\n`),
        });
        const stop = () => agent.shutdown();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        await agent.run();
        // The reason (a token for another computer, or one refused again and again) was logged.
        if (agent.fatal !== null) process.exitCode = 1;
      }),
    );

  worker
    .command('token <computer>')
    .description('issue (or replace) the token of a worker computer: it may only fetch its own commands and report its own runs')
    .option('--json', 'machine-readable output')
    .action(
      action(async (computer: string, o: { json?: boolean }) => {
        if (!COMPUTER.test(computer)) usage('computer', 'must look like user@COMPUTER');
        const { issueWorkerToken } = await import('../../engine/api/auth.js');
        const token = await withStore((s) => issueWorkerToken(s, computer, Date.now()));
        print(o.json, { computer, token }, () => token);
      }),
    );

  worker
    .command('list')
    .description('worker hosts: last seen, version, slots, running jobs')
    .option('--json', 'machine-readable output')
    .action(
      action(async (o: { json?: boolean }) => {
        const rows = await withStore((s) => s.pool.workers());
        const { table } = await import('../io.js');
        print(o.json, rows, () =>
          table([['COMPUTER', 'LAST SEEN', 'VERSION', 'SLOTS', 'RUNNING'], ...rows.map((w) => [w.computer, w.lastSeen ? new Date(w.lastSeen).toISOString() : 'never', w.version ?? '-', String(w.slots), String(w.running)])]),
        );
      }),
    );

  worker
    .command('forget <computer>')
    .description('a worker host gone for good: its runs end in ERROR (outcome unknown), jobs it claimed go back to the queue, its token stops working')
    .option('--force', 'even though it was heard from recently')
    .option('--json', 'machine-readable output')
    .action(
      action(async (computer: string, o: { force?: boolean; json?: boolean }) => {
        if (!COMPUTER.test(computer)) usage('computer', 'must look like user@COMPUTER');
        const { forgetWorker } = await import('../../engine/ops/workers.js');
        const now = Date.now();
        const { workerOfflineMs } = await cliSettings();
        const r = await withStore((s) => forgetWorker(s, (e) => s.events.append(e, now), computer, { force: o.force, now, workerOfflineMs }));
        const { nudgeDaemon } = await import('../../engine/daemon/nudge.js');
        nudgeDaemon(await dataDirPath());
        print(o.json, r, () => `forgot ${computer}: ${r.runs} run(s) end unknown, ${r.failedJobs} job(s) failed, ${r.requeuedJobs} job(s) back in the queue`);
      }),
    );
}
