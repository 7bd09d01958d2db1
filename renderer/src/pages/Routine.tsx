// One routine: definition (secrets masked by the engine), trigger state and next runs, run
// history, the selected run's manifest and exit reason, its live log, and its dependencies.
import { useEffect, useState, type ReactElement } from 'react';
import type { Ret, RoutineDetail, RunSummary } from '../../../contract/calls.js';
import { describeCap, describeRetry, describeTiming } from '../store/describe.js';
import { clock, duration, relative, routinePath, stamp } from '../store/format.js';
import { displayStatus, isActiveRun } from '../store/status.js';
import { useNow, useServices, useTend, useWatch } from '../ui/context.js';
import { LogView } from '../ui/LogView.js';
import { Banner, Button, Empty, Icon, PageHeader, Props, Section, Spinner, StatusChip } from '../ui/parts.js';
import { RoutineActions } from '../ui/RoutineActions.js';
import { href } from '../ui/router.js';

export function RoutinePage({ id }: { id: string }): ReactElement {
  useWatch(`routine:${id}`);
  const detail = useTend((s) => s.details[id]);
  const error = useTend((s) => s.detailErrors[id]);
  if (!detail) {
    return (
      <div className="page">
        <PageHeader title={routinePath(id)} sub={id} />
        {error ? <Banner tone="danger">{error}</Banner> : <div className="loading"><Spinner label="Loading" /> Loading…</div>}
      </div>
    );
  }
  return <RoutineBody d={detail} />;
}

function RoutineBody({ d }: { d: RoutineDetail }): ReactElement {
  const { store } = useServices();
  const now = useNow(1000);
  const action = useTend((s) => s.actions[d.id]);
  const [picked, setPicked] = useState<string | null>(null);
  // Follow the newest run unless the reader picked an older one.
  const latest = d.history[0] ?? null;
  const selected = (picked && d.history.find((r) => r.id === picked)) || latest;
  const status = displayStatus(d);
  const def = d.definition;
  const busy = action?.phase === 'busy' ? action.op : null;
  return (
    <div className="page">
      <PageHeader
        title={
          <>
            {d.name} <StatusChip status={status} />
          </>
        }
        sub={
          <>
            <code>{d.id}</code> · {d.kind}
            {d.external ? ' · external' : ''} · schedule <strong>{d.schedule}</strong>
            {d.observeOnly && (
              <span className="badge badge-observe">
                <Icon name="eye" /> observe-only
              </span>
            )}
          </>
        }
      >
        <RoutineActions routine={d} size="md" />
        {d.trigger === 'paused' ? (
          <Button icon="play" busy={busy === 'resume'} onClick={() => void store.getState().act(d.id, 'resume')}>
            Resume
          </Button>
        ) : (
          <Button icon="pause" busy={busy === 'pause'} disabled={d.trigger !== 'scheduled'} onClick={() => void store.getState().act(d.id, 'pause')}>
            Pause
          </Button>
        )}
        <a className="btn btn-default btn-md" href={href.edit(d.id)}>
          <Icon name="edit" /> Edit
        </a>
      </PageHeader>
      {action?.phase === 'error' && <Banner tone="danger">{action.message}</Banner>}

      <div className="grid-2">
        <Section title="Definition">
          <Props
            rows={[
              ['Command', <code key="c" className="wrap">{[def.command, ...def.args].join(' ') || '—'}</code>],
              ['Working dir', def.cwd ?? <span className="muted">run directory</span>],
              ['Environment', Object.keys(def.env).length ? <code className="wrap">{Object.entries(def.env).map(([k, v]) => `${k}=${v}`).join('  ')}</code> : <span className="muted">none</span>],
              ['Timing', describeTiming(def)],
              ['Computer', def.computer],
              ['Retry', describeRetry(def)],
              ['Misfire / overlap', `${def.misfire} / ${def.overlap}`],
              ['Timeout', def.timeoutMs !== null ? duration(def.timeoutMs) : 'none'],
              ...(def.kind === 'realtime'
                ? ([
                    ['Heartbeat', def.heartbeatMs !== null ? `every ${duration(def.heartbeatMs)} (grace ${duration(def.graceMs)})` : 'process liveness only'],
                  ] as [string, string][])
                : ([['Late after', duration(def.toleranceMs)]] as [string, string][])),
              ['Log cap', describeCap(def)],
              ...(def.revision ? ([['Revision', <code key="r">{def.revision}</code>]] as [string, ReactElement][]) : []),
              ...(def.outputs.length ? ([['Outputs', def.outputs.join(', ')]] as [string, string][]) : []),
            ]}
          />
        </Section>
        <div className="stack">
          <Section title="Trigger">
            <Props
              rows={[
                ['State', d.triggerState ? <span className={`trigger trigger-${d.triggerState.state}`}>{d.triggerState.state}</span> : <span className="muted">none</span>],
                ['Next run', d.nextRun ? `${clock(d.nextRun, now)} (${relative(d.nextRun, now)})` : '—'],
                ...(d.triggerState?.lastError
                  ? ([['Last error', <span key="e" className="text-danger">{`${d.triggerState.lastError}${d.triggerState.lastErrorAt ? ` · ${stamp(d.triggerState.lastErrorAt)}` : ''}`}</span>]] as [string, ReactElement][])
                  : []),
                ...(d.triggerState && d.triggerState.failCount > 0 ? ([['Failures', String(d.triggerState.failCount)]] as [string, string][]) : []),
              ]}
            />
            {d.nextRuns.length > 0 && (
              <ol className="next-runs" aria-label="Next runs">
                {d.nextRuns.map((t) => (
                  <li key={t}>
                    <span className="tabular">{stamp(t)}</span> <span className="muted">{relative(t, now)}</span>
                  </li>
                ))}
              </ol>
            )}
            {(d.trigger === 'failed' || d.trigger === 'fired' || d.trigger === 'cancelled') && (
              <Button size="sm" busy={busy === 'clear'} onClick={() => void store.getState().act(d.id, 'clear')}>
                Clear trigger state
              </Button>
            )}
          </Section>
          <Section title="Dependencies">
            <DepList label="Upstream (runs after)" ids={d.dependencies} />
            <DepList label="Downstream (waits for this)" ids={d.dependents} />
          </Section>
        </div>
      </div>

      <Section title={`Runs (${d.history.length})`}>
        {d.history.length === 0 ? <Empty title="No runs yet" /> : <History runs={d.history} selected={selected?.id ?? null} pick={setPicked} now={now} />}
      </Section>

      <div className="grid-2 grid-log">
        <Section title={selected ? <>Log · <code>{selected.id}</code></> : 'Log'} actions={picked && picked !== latest?.id ? <Button size="sm" onClick={() => setPicked(null)}>Follow latest</Button> : undefined}>
          <LogView runId={selected?.id ?? null} />
        </Section>
        <Section title="Run details">{selected ? <RunDetails run={selected} /> : <Empty title="No run selected" />}</Section>
      </div>
    </div>
  );
}

function DepList({ label, ids }: { label: string; ids: string[] }): ReactElement {
  const routines = useTend((s) => s.routines);
  const index = useTend((s) => s.routineIndex);
  return (
    <div className="deps">
      <div className="deps-label">{label}</div>
      {ids.length === 0 ? (
        <div className="muted small">none</div>
      ) : (
        <ul>
          {ids.map((id) => {
            const i = index.get(id);
            const r = i !== undefined ? routines[i] : undefined;
            return (
              <li key={id}>
                {r && <StatusChip status={displayStatus(r)} />} <a href={href.routine(id)}>{routinePath(id)}</a>
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}

function History({ runs, selected, pick, now }: { runs: RunSummary[]; selected: string | null; pick: (id: string) => void; now: number }): ReactElement {
  return (
    <div className="history scroll">
      <table className="grid-table">
        <thead>
          <tr>
            <th scope="col">Status</th>
            <th scope="col">Run</th>
            <th scope="col">Scheduled</th>
            <th scope="col">Started</th>
            <th scope="col">Duration</th>
            <th scope="col">Exit</th>
            <th scope="col">Reason</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => (
            <tr key={r.id} className={r.id === selected ? 'is-selected' : ''} aria-selected={r.id === selected}>
              <td>
                <StatusChip status={r.status} />
              </td>
              <td>
                <button type="button" className="link" onClick={() => pick(r.id)} aria-label={`Show run ${r.id}`}>
                  {r.id}
                </button>
                {r.manual && <span className="badge">manual</span>}
                {r.attempt > 1 && <span className="badge">attempt {r.attempt}</span>}
              </td>
              <td className="tabular">{clock(r.scheduledAt, now)}</td>
              <td className="tabular">{clock(r.startedAt, now)}</td>
              <td className="tabular">{isActiveRun(r.status) && r.startedAt ? `${duration(now - Date.parse(r.startedAt))}…` : duration(r.durationMs)}</td>
              <td className="tabular">{r.signal ?? r.exitCode ?? '—'}</td>
              <td className="truncate reason" title={r.reason ?? undefined}>
                {r.reason ?? ''}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

type RunShow = Ret<'runs.show'>;

function RunDetails({ run }: { run: RunSummary }): ReactElement {
  const { client } = useServices();
  const [shown, setShown] = useState<RunShow | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    void client.call('runs.show', { id: run.id }).then((r) => {
      if (!live) return;
      if (r.ok) {
        setShown(r.value);
        setError(null);
      } else setError(r.error.message);
    });
    return () => {
      live = false;
    };
  }, [client, run.id, run.status]);
  const exit = run.signal ? `signal ${run.signal}` : run.exitCode !== null ? `exit code ${run.exitCode}` : isActiveRun(run.status) ? 'still running' : 'no exit recorded';
  return (
    <div className="run-details">
      <Props
        rows={[
          ['Status', <StatusChip key="s" status={run.status} />],
          ['Exit', exit],
          ['Reason', run.reason ? <span className={run.status === 'ERROR' ? 'text-danger' : ''}>{run.reason}</span> : <span className="muted">—</span>],
          ['Started → ended', `${stamp(run.startedAt)} → ${run.endedAt ? stamp(run.endedAt) : '…'}`],
          ['Directory', run.runDir ? <code className="wrap">{run.runDir}</code> : <span className="muted">not started</span>],
        ]}
      />
      <div className="deps-label">Manifest</div>
      {error ? <Banner tone="danger">{error}</Banner> : <pre className="manifest" tabIndex={0} role="region" aria-label="Manifest">{shown ? (shown.manifest ? JSON.stringify(shown.manifest, null, 2) : 'No manifest (not started yet).') : 'Loading…'}</pre>}
    </div>
  );
}
