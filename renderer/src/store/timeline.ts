// The Timeline page's geometry: one lane per routine with runs today, bars from start to end
// (to now while running), a time axis with readable ticks. Pure.
import type { Ret } from '../../../contract/calls.js';
import { isActiveRun } from './status.js';

export type TimelineRun = Ret<'runs.list'>[number];

export interface Bar {
  run: TimelineRun;
  start: number;
  end: number;
  /** Still going: the bar grows to now. */
  open: boolean;
  failed: boolean;
  /** Not started yet (PENDING/DELAYED): drawn at its scheduled time as a marker. */
  waiting: boolean;
}

export interface Lane {
  routineId: string;
  bars: Bar[];
  failures: number;
}

export interface Tick {
  at: number;
  label: string;
}

export interface TimelineLayout {
  lanes: Lane[];
  from: number;
  to: number;
  ticks: Tick[];
}

const FAILED = new Set(['ERROR', 'EXITED']);
const STEPS = [10_000, 15_000, 30_000, 60_000, 2 * 60_000, 5 * 60_000, 10 * 60_000, 15 * 60_000, 30 * 60_000, 3_600_000, 2 * 3_600_000, 3 * 3_600_000, 6 * 3_600_000];

/** This browser's day around `now` (23 or 25 hours on DST days): the browser's own calendar knows its zone. */
export function localDay(now: number): { from: number; to: number } {
  const d = new Date(now);
  return { from: new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime(), to: new Date(d.getFullYear(), d.getMonth(), d.getDate() + 1).getTime() };
}

export function timelineLayout(runs: readonly TimelineRun[], now: number, mode: 'fit' | 'day'): TimelineLayout {
  const byRoutine = new Map<string, Bar[]>();
  let lo = Infinity;
  let hi = -Infinity;
  for (const run of runs) {
    const waiting = run.startedAt === null;
    const start = Date.parse(run.startedAt ?? run.scheduledAt);
    const open = isActiveRun(run.status) && !waiting;
    const end = run.endedAt ? Date.parse(run.endedAt) : open ? now : start;
    const bar: Bar = { run, start, end: Math.max(end, start), open, failed: FAILED.has(run.status), waiting };
    let lane = byRoutine.get(run.routineId);
    if (!lane) byRoutine.set(run.routineId, (lane = []));
    lane.push(bar);
    lo = Math.min(lo, start);
    hi = Math.max(hi, bar.end);
  }
  let from: number;
  let to: number;
  if (mode === 'day' || !Number.isFinite(lo)) {
    ({ from, to } = localDay(now));
  } else {
    hi = Math.max(hi, now);
    const span = Math.max(hi - lo, 2 * 60_000);
    const pad = span * 0.06;
    from = lo - pad;
    to = lo + span + pad;
  }
  const lanes = [...byRoutine.entries()]
    .map(([routineId, bars]) => ({ routineId, bars: bars.sort((a, b) => a.start - b.start), failures: bars.filter((b) => b.failed).length }))
    .sort((a, b) => a.bars[0]!.start - b.bars[0]!.start || a.routineId.localeCompare(b.routineId));
  return { lanes, from, to, ticks: ticks(from, to) };
}

export function ticks(from: number, to: number, target = 8): Tick[] {
  const span = to - from;
  const step = STEPS.find((s) => span / s <= target) ?? STEPS[STEPS.length - 1]!;
  const out: Tick[] = [];
  // Align to local wall-clock multiples of the step.
  const offset = new Date(from).getTimezoneOffset() * 60_000;
  let t = Math.ceil((from - offset) / step) * step + offset;
  for (; t <= to; t += step) {
    const d = new Date(t);
    const hm = `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
    out.push({ at: t, label: step < 60_000 ? `${hm}:${String(d.getSeconds()).padStart(2, '0')}` : hm });
  }
  return out;
}

/** Position of an instant as a fraction of the axis, clamped. */
export function frac(t: number, from: number, to: number): number {
  return Math.min(1, Math.max(0, (t - from) / (to - from)));
}
