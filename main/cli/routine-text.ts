// `routine list` and `routine show` as text: what a person needs to read a routine at a glance —
// its group, where and how it runs, its timing in its time zone, its policies, what comes next.
import type { RoutineDef } from '../engine/domain/types.js';
import type { RoutineDetail, RoutineSummary } from '../engine/ops/views.js';
import { formatDuration as dur } from '../engine/timing/duration.js';
import { table } from './io.js';

/** The next run, or the queued retry when it comes first: `2026-… (retry 2 of 61)`. */
export function nextText(r: Pick<RoutineSummary, 'nextRun' | 'retry'>): string {
  const retry = r.retry ? `${r.retry.at} (retry ${r.retry.attempt} of ${r.retry.maxAttempts})` : null;
  if (retry && (r.nextRun === null || r.retry!.at <= r.nextRun)) return retry;
  return r.nextRun ?? '-';
}

function timingText(def: RoutineDef): string {
  if (def.kind === 'realtime') return 'realtime: kept running';
  const t = def.timing;
  if (!t) return def.external ? 'external: reports itself' : '-';
  const tz = ` (${def.tz})`;
  if (t.mode === 'runtimes') return `runtimes ${t.runtimes.join(',')}${tz}`;
  if (t.mode === 'cron') return `cron "${t.cron}"${tz}`;
  if (t.mode === 'every') return `every ${dur(t.everyMs)}, counted from the end of the previous run`;
  return `once at ${t.at}${tz}`;
}

function policiesText(def: RoutineDef): string {
  const parts = [def.retry.delayMs > 0 ? `retry every ${dur(def.retry.delayMs)} for ${dur(def.retry.windowMs)}` : 'retry none'];
  if (def.kind === 'batch') parts.push(`misfire ${def.misfire}`, `overlap ${def.overlap}`, `tolerance ${dur(def.toleranceMs)}`);
  parts.push(`timeout ${def.timeoutMs === null ? 'none' : dur(def.timeoutMs)}`);
  if (def.kind === 'realtime') parts.push(`heartbeat ${def.heartbeatMs === null ? 'none' : dur(def.heartbeatMs)}`, `grace ${dur(def.graceMs)}`);
  parts.push(`log cap ${def.logCapBytes % 1024 ** 2 === 0 ? `${def.logCapBytes / 1024 ** 2}MiB` : `${def.logCapBytes} bytes`}`);
  if (def.outputs.length) parts.push(`outputs ${def.outputs.join(', ')}`);
  if (def.revision) parts.push(`revision ${def.revision}`);
  return parts.join(', ');
}

export function showText(d: RoutineDetail & { backendPaused?: string | null }): string {
  const def = d.definition;
  const lines = [
    `${d.id}  (${d.kind}${d.external ? ', external' : ''}, schedule ${d.schedule}${d.observeOnly ? ', observe-only: nothing is started' : ''})`,
    `group:    ${d.name}`,
    def.external ? '' : `command:  ${[def.command, ...def.args].join(' ')}`,
    def.external ? '' : `cwd:      ${def.cwd ?? '(the run’s job directory)'}`,
    `computer: ${def.computer}, backend ${def.backend}${d.backendPaused ? ` — PAUSED: ${d.backendPaused}` : ''}`,
    `timing:   ${timingText(def)}`,
    `policies: ${policiesText(def)}`,
    `trigger:  ${d.trigger ?? '-'}   next: ${d.retry ? nextText(d) : d.nextRuns.join(', ') || '-'}`,
    `today:    ${d.today ?? '-'}`,
    d.dependencies.length ? `after:    ${d.dependencies.join(', ')}` : '',
    d.dependents.length ? `before:   ${d.dependents.join(', ')}` : '',
    d.history.length ? `recent runs:\n${table(d.history.slice(0, 10).map((r) => [r.id, r.status, `attempt ${r.attempt}`, r.scheduledAt, r.reason ?? '']))}` : '',
  ];
  return lines.filter(Boolean).join('\n');
}
