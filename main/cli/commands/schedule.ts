import type { Command } from 'commander';
import { action, dataDirPath, print, table, withStore } from '../io.js';

export function register(program: Command): void {
  const schedule = program.command('schedule').description('schedules: lists of routines, kept as YAML in git');

  schedule
    .command('list')
    .option('--json', 'machine-readable output')
    .action(
      action(async (o: { json?: boolean }) => {
        const rows = await withStore((s) => {
          const defs = s.routines.allDefs();
          return s.routines.schedules().map((x) => ({ ...x, routines: defs.filter((d) => d.schedule === x.name).length }));
        });
        print(o.json, rows, () => table([['SCHEDULE', 'MODE', 'ROUTINES', 'MAX PARALLEL'], ...rows.map((r) => [r.name, r.mode, String(r.routines), r.maxParallel === null ? '-' : String(r.maxParallel)])]));
      }),
    );

  for (const [verb, mode] of [['observe', 'observe'], ['activate', 'active']] as const) {
    schedule
      .command(`${verb} <name>`)
      .description(verb === 'observe' ? 'observe-only: keep tracking status, send no commands' : 'send commands again')
      .option('--json', 'machine-readable output')
      .action(
        action(async (name: string, o: { json?: boolean }) => {
          const { setScheduleMode } = await import('../../engine/ops/schedule-mode.js');
          await withStore((s) => setScheduleMode(s, name, mode, Date.now()));
          const { nudgeDaemon } = await import('../../engine/daemon/nudge.js');
          nudgeDaemon(await dataDirPath());
          print(o.json, { schedule: name, mode }, () => `schedule ${name}: ${mode}`);
        }),
      );
  }

  schedule
    .command('import <file>')
    .description('load a schedule file (YAML); validated whole, nothing changes if anything is wrong')
    .option('--json', 'machine-readable output')
    .action(
      action(async (file: string, o: { json?: boolean }) => {
        const { readFileSync } = await import('node:fs');
        const { importSchedule } = await import('../../engine/ops/schedules.js');
        let text: string;
        try {
          text = file === '-' ? readFileSync(0, 'utf8') : readFileSync(file, 'utf8');
        } catch (err) {
          const { TendError } = await import('../../engine/errors.js');
          throw new TendError('INVALID', `cannot read ${file}`, [{ path: 'file', message: `cannot read ${file}: ${(err as Error).message}` }]);
        }
        const { dirname, resolve } = await import('node:path');
        // Paths in the file are relative to the file (stdin: to where tend runs).
        const baseDir = file === '-' ? process.cwd() : dirname(resolve(file));
        const res = await withStore((s) => importSchedule(s, text, Date.now(), { baseDir, env: process.env }));
        const { nudgeDaemon } = await import('../../engine/daemon/nudge.js');
        nudgeDaemon(await dataDirPath());
        print(o.json, res, () => res.map((r) => `schedule ${r.schedule}: ${r.created.length} created, ${r.updated.length} updated, ${r.removed.length} removed, ${r.unchanged.length} unchanged`).join('\n'));
      }),
    );

  schedule
    .command('export [name]')
    .description('print schedules as YAML (all of them, as a multi-document stream, without a name)')
    .action(
      action(async (name: string | undefined) => {
        const { exportSchedule } = await import('../../engine/ops/schedules.js');
        process.stdout.write(await withStore((s) => exportSchedule(s, name)));
      }),
    );

  schedule
    .command('schema')
    .description('print the JSON Schema of schedule files')
    .action(
      action(async () => {
        const { scheduleJsonSchema } = await import('../../engine/ops/schedules.js');
        process.stdout.write(`${JSON.stringify(scheduleJsonSchema(), null, 2)}\n`);
      }),
    );
}
