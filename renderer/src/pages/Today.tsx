// Today — the SCHED page: today's routines per schedule, grouped by name, with live status,
// filters and one-click Run now / Restart / Stop. Virtualised: 5,000 routines stay smooth.
import { useVirtualizer } from '@tanstack/react-virtual';
import { memo, useDeferredValue, useMemo, useRef, useState, type ReactElement } from 'react';
import type { RoutineSummary } from '../../../contract/calls.js';
import { clock, duration, relative, routinePath } from '../store/format.js';
import { NOT_RUN, RUN_STATUSES, isActiveRun, type DisplayStatus } from '../store/status.js';
import { NO_FILTERS, todayView, type Counts, type TodayFilters, type TodayRow } from '../store/today.js';
import { useNow, useTend, useWatch } from '../ui/context.js';
import { Banner, Empty, Icon, PageHeader, Spinner, StatusChip } from '../ui/parts.js';
import { RoutineActions } from '../ui/RoutineActions.js';
import { href } from '../ui/router.js';

const ROW = 38;
const FILTER_STATUSES: DisplayStatus[] = [...RUN_STATUSES, NOT_RUN];
let remembered: { filters: TodayFilters; expanded: Set<string> } = { filters: NO_FILTERS, expanded: new Set() };

export function TodayPage(): ReactElement {
  useWatch('routines');
  const routines = useTend((s) => s.routines);
  const load = useTend((s) => s.routinesLoad);
  const error = useTend((s) => s.errors.routines);
  const [filters, setFilters] = useState<TodayFilters>(remembered.filters);
  const [expanded, setExpanded] = useState<Set<string>>(remembered.expanded);
  remembered = { filters, expanded };
  const deferredText = useDeferredValue(filters.text);
  const view = useMemo(() => todayView(routines, { ...filters, text: deferredText }, expanded), [routines, filters, deferredText, expanded]);
  const toggle = (key: string) =>
    setExpanded((prev) => {
      const next = new Set(prev);
      if (!next.delete(key)) next.add(key);
      return next;
    });
  const set = <K extends keyof TodayFilters>(k: K, v: TodayFilters[K]) => setFilters((f) => ({ ...f, [k]: v }));
  const filtered = filters.status !== 'any' || filters.computer || filters.schedule || filters.text;
  const today = new Date().toLocaleDateString(undefined, { weekday: 'long', year: 'numeric', month: 'long', day: 'numeric' });

  return (
    <div className="page page-fill">
      <PageHeader title="Today" sub={`${today} · ${view.total} routine${view.total === 1 ? '' : 's'}${filtered ? ` · ${view.shown} shown` : ''}`}>
        <a className="btn btn-primary btn-md" href={href.newRoutine()}>
          <Icon name="plus" />
          New routine
        </a>
      </PageHeader>
      <div className="filters" role="search" aria-label="Filter routines">
        <div className="status-filter" role="group" aria-label="Status">
          <button type="button" className={`filter-chip ${filters.status === 'any' ? 'is-on' : ''}`} aria-pressed={filters.status === 'any'} onClick={() => set('status', 'any')}>
            All <span className="chip-count">{sum(view.counts)}</span>
          </button>
          {FILTER_STATUSES.filter((s) => view.counts[s] || filters.status === s || s === 'ERROR' || s === 'RUNNING').map((s) => (
            <button key={s} type="button" className={`filter-chip ${filters.status === s ? 'is-on' : ''}`} aria-pressed={filters.status === s} onClick={() => set('status', filters.status === s ? 'any' : s)}>
              <StatusChip status={s} count={view.counts[s] ?? 0} />
            </button>
          ))}
        </div>
        <div className="filter-controls">
          <label className="inline-field">
            <span>Status</span>
            <select value={filters.status} onChange={(e) => set('status', e.target.value as TodayFilters['status'])}>
              <option value="any">Any</option>
              {FILTER_STATUSES.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </label>
          <label className="inline-field">
            <span>Computer</span>
            <select value={filters.computer} onChange={(e) => set('computer', e.target.value)}>
              <option value="">Any</option>
              {view.computers.map((c) => (
                <option key={c}>{c}</option>
              ))}
            </select>
          </label>
          <label className="inline-field">
            <span>Schedule</span>
            <select value={filters.schedule} onChange={(e) => set('schedule', e.target.value)}>
              <option value="">Any</option>
              {view.schedules.map((c) => (
                <option key={c}>{c}</option>
              ))}
            </select>
          </label>
          <label className="inline-field grow">
            <span>Search</span>
            <input type="search" placeholder="Name or id" value={filters.text} onChange={(e) => set('text', e.target.value)} />
          </label>
          {filtered && (
            <button type="button" className="btn btn-ghost btn-sm" onClick={() => setFilters(NO_FILTERS)}>
              Clear filters
            </button>
          )}
        </div>
      </div>
      {error && <Banner tone="danger">Could not load routines: {error}</Banner>}
      {load !== 'ready' ? (
        // Never loaded: the banner above says why; "no routines" would be a guess.
        !error && (
          <div className="loading">
            <Spinner label="Loading routines" /> Loading routines…
          </div>
        )
      ) : view.rows.length === 0 ? (
        routines.length === 0 ? (
          <Empty title="No routines yet">
            Define one with <a href={href.newRoutine()}>New routine</a>, or from a terminal: <code>tend routine add</code>.
          </Empty>
        ) : (
          <Empty title="Nothing matches these filters" />
        )
      ) : (
        <RoutineTable rows={view.rows} toggle={toggle} />
      )}
    </div>
  );
}

function sum(c: Counts): number {
  return Object.values(c).reduce((a, b) => a + (b ?? 0), 0);
}

function RoutineTable({ rows, toggle }: { rows: TodayRow[]; toggle: (key: string) => void }): ReactElement {
  const scroller = useRef<HTMLDivElement>(null);
  const now = useNow(1000);
  const v = useVirtualizer({ count: rows.length, getScrollElement: () => scroller.current, estimateSize: () => ROW, overscan: 12, getItemKey: (i) => rows[i]!.key });
  return (
    <div className="table today-table" role="table" aria-label="Today's routines" aria-rowcount={rows.length}>
      <div className="thead" role="rowgroup">
        <div className="tr today-grid" role="row">
          <span role="columnheader">Status</span>
          <span role="columnheader">Routine</span>
          <span role="columnheader">Computer</span>
          <span role="columnheader">Next run</span>
          <span role="columnheader">Last duration</span>
          <span role="columnheader">Heartbeat</span>
          <span role="columnheader">Actions</span>
        </div>
      </div>
      <div className="tbody scroll" ref={scroller} role="rowgroup" data-testid="today-scroller">
        <div style={{ height: v.getTotalSize(), position: 'relative' }}>
          {v.getVirtualItems().map((item, _, items) => {
            const row = rows[item.index]!;
            // Keyed by slot, not by routine: a row scrolled out is reused for the one scrolled in
            // (its DOM updated, not destroyed and rebuilt), which keeps a fast fling smooth.
            return (
              <div key={item.index % items.length} className="vrow" style={{ transform: `translateY(${item.start}px)`, height: ROW }} role="row" aria-rowindex={item.index + 1}>
                {row.type === 'schedule' ? <ScheduleRow row={row} /> : row.type === 'group' ? <GroupRow row={row} toggle={toggle} /> : <RoutineRow routine={row.routine} status={row.status} nested={row.nested} now={now} />}
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}

function MiniCounts({ counts }: { counts: Counts }): ReactElement {
  return (
    <span className="mini-counts">
      {FILTER_STATUSES.filter((s) => counts[s]).map((s) => (
        <StatusChip key={s} status={s} count={counts[s]} />
      ))}
    </span>
  );
}

function ScheduleRow({ row }: { row: Extract<TodayRow, { type: 'schedule' }> }): ReactElement {
  return (
    <div className="tr schedule-row" role="cell" aria-colspan={7}>
      <span className="schedule-name">Schedule {row.schedule}</span>
      {row.observeOnly && (
        <span className="badge badge-observe" title="Observe-only: status is tracked, no commands are sent">
          <Icon name="eye" /> observe-only
        </span>
      )}
      <span className="muted small">
        {row.total} routine{row.total === 1 ? '' : 's'}
      </span>
      <MiniCounts counts={row.counts} />
    </div>
  );
}

function GroupRow({ row, toggle }: { row: Extract<TodayRow, { type: 'group' }>; toggle: (key: string) => void }): ReactElement {
  return (
    <div className="tr today-grid group-row">
      <span role="cell">
        <StatusChip status={row.status} title={`Rolled up from ${row.members.length} routines`} />
      </span>
      <span role="cell" className="cell-name">
        <button type="button" className="disclosure" aria-expanded={row.expanded} onClick={() => toggle(row.key)}>
          <Icon name={row.expanded ? 'chevron-down' : 'chevron-right'} />
          <span className="strong">{row.name}</span>
        </button>
        <span className="muted small">{row.members.length} routines</span>
      </span>
      <span role="cell" className="muted small truncate">
        {new Set(row.members.map((m) => m.computer)).size} computer{new Set(row.members.map((m) => m.computer)).size === 1 ? '' : 's'}
      </span>
      <span role="cell" className="span-3">
        <MiniCounts counts={row.counts} />
      </span>
      <span role="cell" />
    </div>
  );
}

const RoutineRow = memo(function RoutineRow({ routine: r, status, nested, now }: { routine: RoutineSummary; status: DisplayStatus; nested: boolean; now: number }): ReactElement {
  const path = routinePath(r.id);
  const running = isActiveRun(r.lastRun?.status);
  const hb = r.kind === 'realtime' && running ? (r.lastRun?.heartbeatAt ?? null) : null;
  const hbAge = hb ? now - Date.parse(hb) : null;
  return (
    <div className={`tr today-grid routine-row ${nested ? 'is-nested' : ''}`} data-routine={r.id} data-status={status}>
      <span role="cell">
        <StatusChip status={status} title={r.lastRun?.reason ?? status} />
      </span>
      <span role="cell" className="cell-name">
        <a href={href.routine(r.id)} className="strong truncate" title={r.id}>
          {nested ? path : r.name}
        </a>
        {!nested && r.name !== path && <span className="muted small truncate">{path}</span>}
        {r.kind === 'realtime' && <span className="badge">realtime</span>}
        {r.external && <span className="badge">external</span>}
        {r.trigger === 'paused' && <span className="badge badge-warn">paused</span>}
        {r.trigger === 'failed' && status !== 'ERROR' && <span className="badge badge-danger" title="The trigger failed: see the routine">trigger failed</span>}
      </span>
      <span role="cell" className="muted truncate" title={r.computer}>
        {r.computer}
      </span>
      <span role="cell" className="tabular" title={r.nextRun ? clock(r.nextRun, now) : undefined}>
        {r.kind === 'realtime' ? <span className="muted">always on</span> : r.nextRun ? relative(r.nextRun, now) : <span className="muted">—</span>}
      </span>
      <span role="cell" className="tabular">
        {running && r.lastRun?.startedAt ? <span className="muted">running {duration(now - Date.parse(r.lastRun.startedAt))}</span> : duration(r.lastRun?.durationMs)}
      </span>
      <span role="cell" className={`tabular ${hbAge !== null && hbAge > 60_000 ? 'text-warn' : ''}`} title={hb ? `last heartbeat ${clock(hb, now)}` : undefined}>
        {hbAge !== null ? relative(hb, now) : <span className="muted" title={r.kind === 'realtime' && running ? 'No heartbeat reported (liveness is the process)' : undefined}>—</span>}
      </span>
      <span role="cell">
        <RoutineActions routine={r} />
      </span>
    </div>
  );
});
