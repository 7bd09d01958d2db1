// Definitions in words, for the Routine page.
import type { RoutineDef } from '../../../contract/calls.js';
import { bytes, duration, stamp } from './format.js';

export function describeTiming(def: Pick<RoutineDef, 'kind' | 'timing' | 'tz' | 'external'>): string {
  if (def.kind === 'realtime') return 'Realtime: kept running';
  const t = def.timing;
  if (!t) return def.external ? 'External: reports over the API' : 'No timing';
  switch (t.mode) {
    case 'runtimes':
      return `Daily at ${t.runtimes.join(', ')} (${def.tz})`;
    case 'cron':
      return `Cron ${t.cron} (${def.tz})`;
    case 'every':
      return `Every ${duration(t.everyMs)} after the previous run ends`;
    case 'at':
      return `Once at ${stamp(t.at)}`;
  }
}

export function describeRetry(def: Pick<RoutineDef, 'retry'>): string {
  return def.retry.delayMs === 0 ? 'none' : `every ${duration(def.retry.delayMs)} for up to ${duration(def.retry.windowMs)}`;
}

export function describeCap(def: Pick<RoutineDef, 'logCapBytes'>): string {
  return `${bytes(def.logCapBytes)} per stream`;
}
