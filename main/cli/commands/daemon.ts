import type { Command } from 'commander';
import { cliEntry } from '../../engine/app-root.js';
import { action, dataDirPath, print, table } from '../io.js';

/** This command's own entry file, for spawning daemons and writing service units. */
export const ENTRY = cliEntry();

export function register(program: Command): void {
  const daemon = program.command('daemon').description('the headless scheduler that owns the data dir');

  daemon
    .command('run')
    .description('run the scheduler in the foreground (TEND_DAEMON_INTERVAL_MS, default 1000)')
    .option('--quiet', 'log to daemon.log only')
    .action(
      action(async (o: { quiet?: boolean }) => {
        const { runDaemon } = await import('../../engine/daemon/run.js');
        process.exitCode = await runDaemon({ dataDir: await dataDirPath(), echo: !o.quiet });
      }),
    );

  daemon
    .command('ensure')
    .description('start a detached daemon unless one owns the data dir; return once it answers')
    .option('--json', 'machine-readable output')
    .action(
      action(async (o: { json?: boolean }) => {
        const { ensureDaemon } = await import('../../engine/daemon/control.js');
        const r = await ensureDaemon(await dataDirPath(), ENTRY);
        print(o.json, r, () => `${r.started ? 'started' : 'already running:'} daemon ${r.pid}${r.url ? ` at ${r.url}` : ''}${r.open ? `\nopen ${r.open}` : ''}`);
      }),
    );

  daemon
    .command('stop')
    .description('stop the daemon and wait until it has exited (running jobs keep running)')
    .option('--json', 'machine-readable output')
    .action(
      action(async (o: { json?: boolean }) => {
        const { stopDaemon } = await import('../../engine/daemon/control.js');
        const pid = await stopDaemon(await dataDirPath());
        print(o.json, { stopped: pid }, () => (pid === null ? 'no daemon was running' : `stopped daemon ${pid}`));
      }),
    );

  daemon
    .command('restart')
    .description('stop, wait for the old daemon to exit, start a new one')
    .option('--json', 'machine-readable output')
    .action(
      action(async (o: { json?: boolean }) => {
        const { ensureDaemon, stopDaemon } = await import('../../engine/daemon/control.js');
        const dir = await dataDirPath();
        const old = await stopDaemon(dir);
        const r = await ensureDaemon(dir, ENTRY);
        print(o.json, { stopped: old, ...r }, () => `${old === null ? '' : `stopped ${old}, `}started daemon ${r.pid}${r.url ? ` at ${r.url}` : ''}${r.open ? `\nopen ${r.open}` : ''}`);
      }),
    );

  daemon
    .command('status')
    .description('ownership, heartbeat, queue counts, next due work, recent failures; exit 0 when healthy')
    .option('--json', 'machine-readable output')
    .action(
      action(async (o: { json?: boolean }) => {
        // A live daemon's counts are in its state file: no SQLite is loaded for them.
        const { ownerCounts, readOwner, statusFrom } = await import('../../engine/daemon/status-read.js');
        const dir = await dataDirPath();
        const now = Date.now();
        const owner = readOwner(dir, now);
        const saved = ownerCounts(owner, now);
        let store: { close(): void } | null = null;
        try {
          let s;
          if (saved) s = statusFrom(dir, owner, now, saved);
          else {
            const [{ daemonStatus, hasDatabase }, { Store }, { paths }] = await Promise.all([import('../../engine/daemon/status.js'), import('../../engine/store/store.js'), import('../../engine/datadir.js')]);
            const opened = hasDatabase(dir) ? Store.open(paths(dir).db, { readonly: true }) : null;
            store = opened;
            s = daemonStatus(dir, opened, now);
          }
          const { webhookStatusLines } = o.json ? { webhookStatusLines: () => [] } : await import('../../engine/webhooks/status.js');
          print(o.json, s, () =>
            [
              `data dir:  ${s.dataDir}`,
              `daemon:    ${s.owner ? `pid ${s.owner.pid} ${s.owner.alive ? 'running' : 'NOT running (stale pidfile)'}` : 'none'}${s.healthy ? ', healthy' : ''}`,
              `heartbeat: ${s.heartbeat.last ?? '-'}${s.heartbeat.ageMs !== null ? ` (${Math.round(s.heartbeat.ageMs / 1000)}s ago${s.heartbeat.fresh ? '' : ', stale'})` : ''}`,
              `api:       ${s.api?.url ?? '-'}`,
              `today:     ${Object.entries(s.runs).map(([k, v]) => `${k} ${v}`).join(', ') || 'no runs'}`,
              `jobs:      ${Object.entries(s.jobs).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`,
              `in flight: ${s.inFlight}`,
              `next due:  ${s.nextDue ? `${s.nextDue.routineId} at ${s.nextDue.at}` : '-'}`,
              ...Object.entries(s.pausedBackends).map(([name, why]) => `paused:    backend ${name}: ${why}`),
              ...(s.history ? [`history:   ${historyLine(s.history)}`] : []),
              ...(s.recentFailures.length ? ['recent failures:', table(s.recentFailures.map((f) => [f.at, f.routineId, f.reason ?? '']))] : []),
              ...webhookStatusLines(s.webhooks),
            ].join('\n'),
          );
          process.exitCode = s.healthy ? 0 : 1;
        } finally {
          store?.close();
        }
      }),
    );

  daemon
    .command('doctor')
    .description('actionable findings: stale pidfile, database integrity, permissions, disk, logs, failing routines, silent workers')
    .option('--json', 'machine-readable output')
    .action(
      action(async (o: { json?: boolean }) => {
        const [{ doctor }, { checkIntegrity }, { hasDatabase }, { Store }, { paths }] = await Promise.all([
          import('../../engine/daemon/doctor.js'),
          import('../../engine/store/integrity.js'),
          import('../../engine/daemon/status.js'),
          import('../../engine/store/store.js'),
          import('../../engine/datadir.js'),
        ]);
        const dir = await dataDirPath();
        let store = null;
        let openError: string | null = null;
        try {
          store = hasDatabase(dir) ? Store.open(paths(dir).db, { readonly: true }) : null;
        } catch (err) {
          openError = (err as Error).message;
        }
        try {
          // The one command that reads the whole file: the page-by-page check belongs here.
          const findings = doctor(dir, store, Date.now(), store ? await checkIntegrity(paths(dir).db) : null);
          if (openError) findings.unshift({ id: 'database-unreadable', severity: 'error', message: openError, action: 'move tend.db aside and restore it from a backup' });
          print(o.json, findings, () => findings.map((f) => `[${f.severity}] ${f.message}${f.action ? `\n        → ${f.action}` : ''}`).join('\n'));
          process.exitCode = findings.some((f) => f.severity === 'error') ? 1 : 0;
        } finally {
          store?.close();
        }
      }),
    );
}

function historyLine(h: { keepDays: number | null; lastSweep: { at: string; runs: number; jobs: number; events: number; dirs: number } | null }): string {
  if (h.keepDays === null) return 'kept forever (TEND_KEEP_DAYS=forever)';
  const last = h.lastSweep ? `; last sweep ${h.lastSweep.at} removed ${h.lastSweep.runs} runs, ${h.lastSweep.jobs} jobs, ${h.lastSweep.events} events, ${h.lastSweep.dirs} directories` : '';
  return `kept ${h.keepDays} days${last}`;
}
