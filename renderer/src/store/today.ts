// The Today (SCHED) page as rows: per schedule, routines grouped by name (same name rolls up),
// filtered by status, computer, schedule and text. Pure, so 5,000 routines are cheap to re-derive.
import type { RoutineSummary } from '../../../contract/calls.js';
import { displayStatus, worst, type DisplayStatus } from './status.js';

export interface TodayFilters {
  status: DisplayStatus | 'any';
  computer: string; // '' = any
  schedule: string; // '' = any
  text: string;
}

export const NO_FILTERS: TodayFilters = { status: 'any', computer: '', schedule: '', text: '' };

export type Counts = Partial<Record<DisplayStatus, number>>;

export type TodayRow =
  | { type: 'schedule'; key: string; schedule: string; observeOnly: boolean; total: number; counts: Counts }
  | { type: 'group'; key: string; name: string; schedule: string; members: RoutineSummary[]; status: DisplayStatus; counts: Counts; expanded: boolean }
  | { type: 'routine'; key: string; routine: RoutineSummary; status: DisplayStatus; nested: boolean };

export interface TodayView {
  rows: TodayRow[];
  /** Per status, over routines matching every filter but the status one (the filter chips). */
  counts: Counts;
  total: number;
  shown: number;
  computers: string[];
  schedules: string[];
}

export function matchesText(r: RoutineSummary, text: string): boolean {
  if (!text) return true;
  const t = text.toLowerCase();
  return r.id.toLowerCase().includes(t) || r.name.toLowerCase().includes(t);
}

export function groupKey(schedule: string, name: string): string {
  return `${schedule}\u0000${name}`;
}

export function todayView(routines: readonly RoutineSummary[], f: TodayFilters, expanded: ReadonlySet<string>): TodayView {
  const computers = new Set<string>();
  const schedules = new Set<string>();
  const counts: Counts = {};
  // schedule → name → members
  const tree = new Map<string, Map<string, { r: RoutineSummary; s: DisplayStatus }[]>>();
  const observe = new Map<string, boolean>();
  let shown = 0;
  for (const r of routines) {
    computers.add(r.computer);
    schedules.add(r.schedule);
    if (f.computer && r.computer !== f.computer) continue;
    if (f.schedule && r.schedule !== f.schedule) continue;
    if (!matchesText(r, f.text.trim())) continue;
    const s = displayStatus(r);
    counts[s] = (counts[s] ?? 0) + 1;
    if (f.status !== 'any' && s !== f.status) continue;
    shown++;
    let byName = tree.get(r.schedule);
    if (!byName) tree.set(r.schedule, (byName = new Map()));
    let members = byName.get(r.name);
    if (!members) byName.set(r.name, (members = []));
    members.push({ r, s });
    if (r.observeOnly) observe.set(r.schedule, true);
  }
  const rows: TodayRow[] = [];
  for (const schedule of [...tree.keys()].sort()) {
    const byName = tree.get(schedule)!;
    const scheduleCounts: Counts = {};
    let total = 0;
    const body: TodayRow[] = [];
    for (const name of [...byName.keys()].sort((a, b) => a.localeCompare(b))) {
      const members = byName.get(name)!.sort((a, b) => a.r.id.localeCompare(b.r.id));
      const groupCounts: Counts = {};
      for (const m of members) {
        groupCounts[m.s] = (groupCounts[m.s] ?? 0) + 1;
        scheduleCounts[m.s] = (scheduleCounts[m.s] ?? 0) + 1;
      }
      total += members.length;
      if (members.length === 1) {
        const m = members[0]!;
        body.push({ type: 'routine', key: m.r.id, routine: m.r, status: m.s, nested: false });
        continue;
      }
      const key = groupKey(schedule, name);
      const open = expanded.has(key);
      body.push({ type: 'group', key, name, schedule, members: members.map((m) => m.r), status: worst(members.map((m) => m.s)), counts: groupCounts, expanded: open });
      if (open) for (const m of members) body.push({ type: 'routine', key: m.r.id, routine: m.r, status: m.s, nested: true });
    }
    rows.push({ type: 'schedule', key: `schedule:${schedule}`, schedule, observeOnly: observe.get(schedule) ?? false, total, counts: scheduleCounts });
    rows.push(...body);
  }
  return { rows, counts, total: routines.length, shown, computers: [...computers].sort(), schedules: [...schedules].sort() };
}
