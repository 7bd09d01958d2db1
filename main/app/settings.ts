// The app's own small memory (not the engine's): which schedules "Pause scheduling" took, so that
// Resume gives back exactly those. A JSON file in Electron's userData directory.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export interface AppSettings {
  pausedSchedules: string[];
}

const DEFAULTS: AppSettings = { pausedSchedules: [] };

export function readSettings(file: string): AppSettings {
  try {
    const raw = JSON.parse(readFileSync(file, 'utf8')) as Partial<AppSettings>;
    const paused = Array.isArray(raw.pausedSchedules) ? raw.pausedSchedules.filter((s): s is string => typeof s === 'string') : [];
    return { ...DEFAULTS, pausedSchedules: paused };
  } catch {
    return { ...DEFAULTS };
  }
}

export function writeSettings(file: string, s: AppSettings): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(s, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
}
