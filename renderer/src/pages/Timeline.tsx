// Timeline: today's runs per routine as a Gantt chart, with a now-line, failed runs marked and
// details on hover or focus.
import { useVirtualizer } from '@tanstack/react-virtual';
import { useMemo, useRef, useState, type ReactElement } from 'react';
import { clock, duration, routinePath, stamp } from '../store/format.js';
import { TONE } from '../store/status.js';
import { frac, timelineLayout, type Bar } from '../store/timeline.js';
import { useNow, useTend, useWatch } from '../ui/context.js';
import { Banner, Empty, PageHeader, Spinner, StatusChip } from '../ui/parts.js';
import { href } from '../ui/router.js';

const LANE = 34;

export function TimelinePage(): ReactElement {
  useWatch('runs', 'routines');
  const runs = useTend((s) => s.runs);
  const load = useTend((s) => s.runsLoad);
  const error = useTend((s) => s.errors.runs);
  const now = useNow(5000);
  const [mode, setMode] = useState<'fit' | 'day'>('fit');
  const layout = useMemo(() => timelineLayout(runs, now, mode), [runs, now, mode]);
  const failed = layout.lanes.reduce((n, l) => n + l.failures, 0);
  return (
    <div className="page page-fill">
      <PageHeader title="Timeline" sub={`${runs.length} run${runs.length === 1 ? '' : 's'} today across ${layout.lanes.length} routine${layout.lanes.length === 1 ? '' : 's'}${failed ? ` · ${failed} failed` : ''}`}>
        <div className="segmented" role="group" aria-label="Time range">
          <button type="button" aria-pressed={mode === 'fit'} className={mode === 'fit' ? 'is-on' : ''} onClick={() => setMode('fit')}>
            Fit to runs
          </button>
          <button type="button" aria-pressed={mode === 'day'} className={mode === 'day' ? 'is-on' : ''} onClick={() => setMode('day')}>
            Whole day
          </button>
        </div>
      </PageHeader>
      {error && <Banner tone="danger">Could not load runs: {error}</Banner>}
      {load !== 'ready' && !error ? (
        <div className="loading">
          <Spinner label="Loading runs" /> Loading runs…
        </div>
      ) : layout.lanes.length === 0 ? (
        <Empty title="No runs today yet">Runs appear here as they are scheduled and started.</Empty>
      ) : (
        <Gantt layout={layout} now={now} />
      )}
    </div>
  );
}

function Gantt({ layout, now }: { layout: ReturnType<typeof timelineLayout>; now: number }): ReactElement {
  const scroller = useRef<HTMLDivElement>(null);
  const routines = useTend((s) => s.routines);
  const index = useTend((s) => s.routineIndex);
  const [hover, setHover] = useState<{ bar: Bar; x: number; y: number } | null>(null);
  const v = useVirtualizer({ count: layout.lanes.length, getScrollElement: () => scroller.current, estimateSize: () => LANE, overscan: 10 });
  const { from, to } = layout;
  const pct = (t: number) => `${(frac(t, from, to) * 100).toFixed(3)}%`;
  const nowVisible = now >= from && now <= to;
  return (
    <div className="gantt" onMouseLeave={() => setHover(null)}>
      <div className="gantt-axis" aria-hidden="true">
        <div className="gantt-label-col" />
        <div className="gantt-track">
          {layout.ticks
            .filter((t) => !nowVisible || Math.abs(frac(t.at, from, to) - frac(now, from, to)) > 0.06)
            .map((t) => (
              <span key={t.at} className="gantt-tick" style={{ left: pct(t.at) }}>
                {t.label}
              </span>
            ))}
          {nowVisible && (
            <span className="gantt-now-label" style={{ left: pct(now) }}>
              now {clock(now, now, false)}
            </span>
          )}
        </div>
      </div>
      <div className="gantt-body scroll" ref={scroller} role="list" aria-label="Runs per routine">
        <div style={{ height: v.getTotalSize(), position: 'relative' }}>
          <div className="gantt-grid" aria-hidden="true">
            {layout.ticks.map((t) => (
              <span key={t.at} className="gantt-gridline" style={{ left: pct(t.at) }} />
            ))}
            {nowVisible && <span className="gantt-now" style={{ left: pct(now) }} data-testid="now-line" />}
          </div>
          {v.getVirtualItems().map((item) => {
            const lane = layout.lanes[item.index]!;
            const i = index.get(lane.routineId);
            const r = i !== undefined ? routines[i] : undefined;
            return (
              <div key={lane.routineId} role="listitem" className="gantt-lane vrow" style={{ transform: `translateY(${item.start}px)`, height: LANE }} data-routine={lane.routineId}>
                <div className="gantt-label-col">
                  <a href={href.routine(lane.routineId)} className="truncate" title={lane.routineId}>
                    {r?.name ?? routinePath(lane.routineId)}
                  </a>
                  {lane.failures > 0 && <span className="badge badge-danger">{lane.failures} failed</span>}
                </div>
                <div className="gantt-track">
                  {lane.bars.map((b) => {
                    const tone = TONE[b.run.status] ?? 'neutral';
                    const left = frac(b.start, from, to);
                    const width = Math.max(frac(b.end, from, to) - left, 0);
                    const label = `${lane.routineId}: ${b.run.status}, ${b.waiting ? `scheduled ${stamp(b.run.scheduledAt)}` : `${clock(b.start, now)}–${b.open ? 'now' : clock(b.end, now)}`}${b.run.reason ? `, ${b.run.reason}` : ''}`;
                    return (
                      <a
                        key={b.run.id}
                        href={href.routine(lane.routineId)}
                        className={`gantt-bar tone-${tone} ${b.failed ? 'is-failed' : ''} ${b.open ? 'is-open' : ''} ${b.waiting ? 'is-waiting' : ''}`}
                        style={{ left: `${(left * 100).toFixed(3)}%`, width: `max(${(width * 100).toFixed(3)}%, 4px)` }}
                        aria-label={label}
                        data-status={b.run.status}
                        onMouseEnter={(e) => setHover({ bar: b, x: e.clientX, y: e.currentTarget.getBoundingClientRect().bottom })}
                        onFocus={(e) => {
                          const rect = e.currentTarget.getBoundingClientRect();
                          setHover({ bar: b, x: rect.left, y: rect.bottom });
                        }}
                        onBlur={() => setHover(null)}
                      >
                        {b.failed && <span className="gantt-x" aria-hidden="true">✕</span>}
                      </a>
                    );
                  })}
                </div>
              </div>
            );
          })}
        </div>
      </div>
      {hover && <Tip bar={hover.bar} x={hover.x} y={hover.y} now={now} />}
    </div>
  );
}

function Tip({ bar, x, y, now }: { bar: Bar; x: number; y: number; now: number }): ReactElement {
  const r = bar.run;
  const left = Math.min(x, window.innerWidth - 320);
  return (
    <div className="tooltip" role="tooltip" style={{ left, top: y + 6 }}>
      <div className="tooltip-head">
        <StatusChip status={r.status} /> <code>{r.id}</code>
      </div>
      <div className="tooltip-row">
        <span>Routine</span> {r.routineId}
      </div>
      <div className="tooltip-row">
        <span>Scheduled</span> {clock(r.scheduledAt, now)}
      </div>
      <div className="tooltip-row">
        <span>Started</span> {clock(r.startedAt, now)}
      </div>
      <div className="tooltip-row">
        <span>Ended</span> {r.endedAt ? clock(r.endedAt, now) : bar.open ? 'running' : '—'}
      </div>
      <div className="tooltip-row">
        <span>Duration</span> {bar.open && r.startedAt ? duration(now - Date.parse(r.startedAt)) : duration(r.durationMs)}
      </div>
      {(r.exitCode !== null || r.signal) && (
        <div className="tooltip-row">
          <span>Exit</span> {r.signal ?? r.exitCode}
        </div>
      )}
      {r.reason && r.reason !== `exit ${r.exitCode}` && <div className="tooltip-reason">{r.reason}</div>}
    </div>
  );
}
