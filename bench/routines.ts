// The idle and CLI benches' data dir: 100 batch routines with cron timings, none due soon.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { tendOk } from '../test/helpers/cli.js';

export function importIdleRoutines(dir: string, count = 100): void {
  // In the hour twelve hours from now: at a fixed hour, a bench run in that hour saw routines fire
  // (and the daemon load what firing needs) in what it measured as idle.
  const hour = (new Date().getUTCHours() + 12) % 24;
  const routines = Array.from({ length: count }, (_, i) => ({ id: `bench@host:r/${i}`, command: '/bin/true', cron: `${i % 60} ${hour} * * *`, tz: 'UTC' }));
  writeFileSync(join(dir, 'bench.yaml'), stringify({ schedule: 'bench', routines }));
  tendOk(dir, ['schedule', 'import', join(dir, 'bench.yaml')]);
}
