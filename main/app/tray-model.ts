// What the tray shows, from the engine's read model: a colour for the icon, a tooltip with
// counts, and the menu as data. The Electron side only turns items into MenuItems and actions
// into calls.
import type { RoutineSummary } from '../engine/ops/views.js';

export type Health = 'ok' | 'delayed' | 'error';
export type TrayColour = 'green' | 'amber' | 'red';

export const COLOUR: Record<Health, TrayColour> = { ok: 'green', delayed: 'amber', error: 'red' };

export type TrayAction =
  | { type: 'open' }
  | { type: 'open-routine'; routineId: string }
  | { type: 'restart'; routineId: string }
  | { type: 'pause' }
  | { type: 'resume' }
  | { type: 'toggle-login' }
  | { type: 'quit' };

export type TrayItem =
  | { kind: 'action'; label: string; action: TrayAction; enabled?: boolean }
  | { kind: 'checkbox'; label: string; checked: boolean; action: TrayAction }
  | { kind: 'submenu'; label: string; items: TrayItem[] }
  | { kind: 'label'; label: string }
  | { kind: 'separator' };

export interface TrayModel {
  health: Health;
  colour: TrayColour;
  tooltip: string;
  counts: TrayCounts;
  items: TrayItem[];
}

export interface TrayCounts {
  routines: number;
  failed: number;
  delayed: number;
  running: number;
}

export interface TrayOptions {
  startAtLogin: boolean;
  /** Attached to a headless daemon rather than running the engine in this process. */
  mode?: 'engine' | 'attached';
  /** The engine cannot be reached (attached, daemon gone): health unknown, shown as an error. */
  unreachable?: string | null;
  /** Failures listed one by one; the rest are summed up. */
  maxListed?: number;
}

const FAILED = new Set<RoutineSummary['today']>(['ERROR']);
const DELAYED = new Set<RoutineSummary['today']>(['DELAYED']);
const RUNNING = new Set<RoutineSummary['today']>(['STARTING', 'RUNNING']);

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function countRoutines(routines: RoutineSummary[]): TrayCounts {
  let failed = 0;
  let delayed = 0;
  let running = 0;
  for (const r of routines) {
    if (FAILED.has(r.today)) failed++;
    else if (DELAYED.has(r.today)) delayed++;
    else if (RUNNING.has(r.today)) running++;
  }
  return { routines: routines.length, failed, delayed, running };
}

export function healthOf(c: TrayCounts): Health {
  return c.failed > 0 ? 'error' : c.delayed > 0 ? 'delayed' : 'ok';
}

export function trayModel(routines: RoutineSummary[], paused: boolean, o: TrayOptions): TrayModel {
  const counts = countRoutines(routines);
  const health: Health = o.unreachable ? 'error' : healthOf(counts);
  const maxListed = o.maxListed ?? 10;

  const parts: string[] = [];
  if (o.unreachable) parts.push(o.unreachable);
  else {
    parts.push(plural(counts.routines, 'routine'));
    const detail = [counts.failed && `${counts.failed} failed`, counts.delayed && `${counts.delayed} delayed`, counts.running && `${counts.running} running`].filter(Boolean);
    parts[0] += detail.length ? `: ${detail.join(', ')}` : counts.routines ? ': all fine' : '';
  }
  if (paused) parts.push('scheduling paused (observe-only)');
  if (o.mode === 'attached') parts.push('attached to the daemon');
  const tooltip = `Tend — ${parts.join(' · ')}`;

  const items: TrayItem[] = [{ kind: 'action', label: 'Open Tend', action: { type: 'open' } }, { kind: 'separator' }];

  const failures = routines.filter((r) => FAILED.has(r.today)).sort((a, b) => a.id.localeCompare(b.id));
  if (failures.length) {
    items.push({ kind: 'label', label: `Failed today (${failures.length})` });
    for (const r of failures.slice(0, maxListed)) {
      items.push({
        kind: 'submenu',
        label: shortId(r.id),
        items: [
          { kind: 'action', label: 'Restart', action: { type: 'restart', routineId: r.id } },
          { kind: 'action', label: 'Open', action: { type: 'open-routine', routineId: r.id } },
        ],
      });
    }
    if (failures.length > maxListed) items.push({ kind: 'action', label: `…and ${failures.length - maxListed} more`, action: { type: 'open' } });
    items.push({ kind: 'separator' });
  }

  items.push(
    paused
      ? { kind: 'action', label: 'Resume scheduling', action: { type: 'resume' }, enabled: !o.unreachable }
      : { kind: 'action', label: 'Pause scheduling (observe-only)', action: { type: 'pause' }, enabled: !o.unreachable && routines.length > 0 },
    { kind: 'checkbox', label: 'Start at login', checked: o.startAtLogin, action: { type: 'toggle-login' } },
    { kind: 'separator' },
    { kind: 'action', label: 'Quit Tend', action: { type: 'quit' } },
  );
  return { health, colour: COLOUR[health], tooltip, counts, items };
}

/** `user@HOST:reports/download` → `reports/download` (the part people recognise). */
export function shortId(id: string): string {
  const i = id.indexOf(':');
  return i >= 0 ? id.slice(i + 1) : id;
}
