// "Pause scheduling" in the tray: every schedule observe-only (status still tracked, no command
// sent). Resume gives back exactly what pausing took: schedules a person had put in observe-only
// on purpose stay there.

export interface ScheduleMode {
  name: string;
  mode: 'active' | 'observe';
}

export interface ModeChange {
  name: string;
  mode: 'active' | 'observe';
}

/** Paused: there is something to schedule and every schedule is observe-only. */
export function schedulingPaused(schedules: readonly ScheduleMode[]): boolean {
  return schedules.length > 0 && schedules.every((s) => s.mode === 'observe');
}

/** The active schedules go observe-only; their names are what resume restores. */
export function pausePlan(schedules: readonly ScheduleMode[]): { changes: ModeChange[]; remember: string[] } {
  const active = schedules.filter((s) => s.mode === 'active').map((s) => s.name);
  return { changes: active.map((name) => ({ name, mode: 'observe' })), remember: active };
}

/**
 * The schedules pausing took, if they are still observe-only. With nothing remembered (paused
 * from elsewhere, or the memory was lost) resume means resume: every schedule becomes active.
 */
export function resumePlan(schedules: readonly ScheduleMode[], remembered: readonly string[]): ModeChange[] {
  const observing = schedules.filter((s) => s.mode === 'observe').map((s) => s.name);
  const known = new Set(remembered);
  const mine = observing.filter((n) => known.has(n));
  return (mine.length ? mine : observing).map((name) => ({ name, mode: 'active' }));
}
