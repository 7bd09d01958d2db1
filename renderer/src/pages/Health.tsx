// Health: the daemon's status (ownership, heartbeat, queues, next due work, recent failures) and
// the doctor's findings with what to do about each.
import type { ReactElement } from 'react';
import type { DaemonStatus, Finding } from '../../../contract/calls.js';
import { clock, duration, relative, routinePath } from '../store/format.js';
import { useNow, useServices, useTend, useWatch } from '../ui/context.js';
import { Banner, Button, Empty, Icon, PageHeader, Props, Section, Spinner, StatusChip } from '../ui/parts.js';
import { href } from '../ui/router.js';
import type { DisplayStatus } from '../store/status.js';

const SEVERITY_TONE = { ok: 'success', info: 'info', warn: 'warning', error: 'danger' } as const;

export function HealthPage(): ReactElement {
  useWatch('health', 'routines');
  const status = useTend((s) => s.status);
  const findings = useTend((s) => s.findings);
  const load = useTend((s) => s.healthLoad);
  const error = useTend((s) => s.errors.health);
  const recent = useTend((s) => s.recent);
  const lastPass = useTend((s) => s.lastPass);
  const where = useTend((s) => s.where);
  const now = useNow(1000);
  if (load !== 'ready' || !status) {
    return (
      <div className="page">
        <PageHeader title="Health" />
        {error ? <Banner tone="danger">Could not read the daemon's status: {error}</Banner> : <div className="loading"><Spinner label="Loading" /> Loading…</div>}
      </div>
    );
  }
  const hbAge = lastPass ? now - lastPass.receivedAt : status.heartbeat.ageMs;
  const problems = findings.filter((f) => f.severity === 'error' || f.severity === 'warn').length;
  return (
    <div className="page">
      <PageHeader title="Health" sub={`Connected to the ${where}`}>
        <span className={`health-pill ${status.healthy ? 'is-ok' : 'is-bad'}`} role="status">
          <span className="chip-dot" aria-hidden="true" />
          {status.healthy ? 'Scheduler healthy' : 'Scheduler not healthy'}
        </span>
      </PageHeader>
      {error && <Banner tone="warning">Last refresh failed: {error}</Banner>}
      <div className="grid-2">
        <Section title="Daemon">
          <Props
            rows={[
              ['Owner', status.owner ? `${status.owner.kind} pid ${status.owner.pid}${status.owner.alive ? '' : ' (not running)'}` : 'none'],
              ['Started', status.owner ? `${clock(status.owner.startedAt, now)} (${relative(status.owner.startedAt, now)})` : '—'],
              ['Heartbeat', <span key="hb" className={status.heartbeat.fresh ? '' : 'text-danger'}>{hbAge !== null ? `${relative(now - hbAge, now)}${status.heartbeat.fresh ? '' : ' — stale'}` : 'never'}</span>],
              ['Version', status.version ?? '—'],
              ['API', status.api?.url ?? '—'],
              ['Data dir', <code key="d">{status.dataDir}</code>],
              ['In flight', String(status.inFlight)],
              ['Next due', status.nextDue ? <span key="n"><a href={href.routine(status.nextDue.routineId)}>{routinePath(status.nextDue.routineId)}</a> {relative(status.nextDue.at, now)}</span> : 'nothing scheduled'],
              ['Last pass', status.lastPass ? `${duration(status.lastPass.durationMs)} · fired ${status.lastPass.fired} · submitted ${status.lastPass.submitted} · settled ${status.lastPass.settled} · faults ${status.lastPass.faults}` : '—'],
              ['History', historyText(status.history, now)],
            ]}
          />
        </Section>
        <div className="stack">
          <Section title="Runs today">
            <Counts counts={status.runs} />
          </Section>
          <Section title="Batch jobs">
            <Counts counts={status.jobs} />
          </Section>
        </div>
      </div>
      <Section title={`Findings${problems ? ` (${problems} to act on)` : ''}`}>
        <ul className="findings">
          {findings.map((f, i) => (
            <FindingRow key={`${f.id}-${i}`} f={f} />
          ))}
        </ul>
      </Section>
      <div className="grid-2">
        <Section title="Recent failures">
          {status.recentFailures.length === 0 ? (
            <Empty title="No failures" />
          ) : (
            <ul className="plain-list">
              {status.recentFailures.map((f) => (
                <li key={f.runId}>
                  <a href={href.routine(f.routineId)}>{routinePath(f.routineId)}</a> <span className="muted small">{clock(f.at, now)}</span>
                  <div className="muted small truncate">{f.reason}</div>
                </li>
              ))}
            </ul>
          )}
        </Section>
        <Section title="Recent events">
          {/* Focusable: a scrolling list must be reachable by keyboard even when no row holds a link. */}
          <ul className="events scroll" tabIndex={0} aria-label="Recent events">
            {recent.slice(0, 40).map((e) => (
              <li key={e.id} className={`event level-${e.level}`}>
                <span className="tabular muted">{clock(e.at, now)}</span>
                <code className="event-type">{e.type}</code>
                <span className="truncate" title={e.message}>
                  {e.routineId ? <a href={href.routine(e.routineId)}>{routinePath(e.routineId)}</a> : e.jobId !== null && !e.message.startsWith(`job ${e.jobId}`) ? `job ${e.jobId}` : ''} {e.message}
                </span>
              </li>
            ))}
          </ul>
        </Section>
      </div>
    </div>
  );
}

function Counts({ counts }: { counts: Record<string, number> }): ReactElement {
  const entries = Object.entries(counts).filter(([, n]) => n > 0);
  if (entries.length === 0) return <div className="muted small">none yet</div>;
  return (
    <div className="count-chips">
      {entries.map(([s, n]) => (
        <StatusChip key={s} status={s as DisplayStatus} count={n} />
      ))}
    </div>
  );
}

/** A finding, and when it names a routine, the buttons to act on it. */
function FindingRow({ f }: { f: Finding }): ReactElement {
  const { store } = useServices();
  const index = useTend((s) => s.routineIndex);
  const routineId = f.id.startsWith('routine-') ? f.message.split(' ')[0] : undefined;
  const known = routineId !== undefined && index.has(routineId);
  const action = useTend((s) => (routineId ? s.actions[routineId] : undefined));
  return (
    <li className={`finding sev-${f.severity}`} data-finding={f.id}>
      <span className={`chip tone-${SEVERITY_TONE[f.severity]}`}>
        <span className="chip-dot" aria-hidden="true" />
        {f.severity}
      </span>
      <div className="finding-body">
        <div className="finding-message">{f.message}</div>
        {f.action && (
          <div className="finding-action">
            <span className="muted">Suggested:</span> <Commands text={f.action} />
            <CopyButton text={f.action} />
          </div>
        )}
      </div>
      {known && (
        <div className="finding-buttons">
          <a className="btn btn-default btn-sm" href={href.routine(routineId)}>
            Open
          </a>
          {f.id === 'routine-error' && (
            <Button size="sm" icon="restart" busy={action?.phase === 'busy'} onClick={() => void store.getState().act(routineId, 'restart')} aria-label={`Restart ${routinePath(routineId)}`}>
              Restart
            </Button>
          )}
        </div>
      )}
    </li>
  );
}

/** `backticked` parts of a suggestion are commands. */
function Commands({ text }: { text: string }): ReactElement {
  return <span>{text.split('`').map((part, i) => (i % 2 ? <code key={i}>{part}</code> : part))}</span>;
}

function CopyButton({ text }: { text: string }): ReactElement | null {
  if (!navigator.clipboard) return null;
  const command = /`([^`]+)`/.exec(text)?.[1] ?? text;
  return (
    <button type="button" className="btn btn-ghost btn-sm icon-only" aria-label={`Copy ${command}`} title="Copy the command" onClick={() => void navigator.clipboard.writeText(command)}>
      <Icon name="copy" />
    </button>
  );
}

function historyText(h: DaemonStatus['history'], now: number): string {
  if (!h) return '—';
  if (h.keepDays === null) return 'kept forever';
  const sweep = h.lastSweep;
  const removed = sweep ? sweep.runs + sweep.jobs + sweep.events : 0;
  return `kept ${h.keepDays} days${sweep ? ` · last cleaned ${relative(sweep.at, now)}${removed ? `: ${sweep.runs} runs, ${sweep.jobs} jobs, ${sweep.events} events removed` : ', nothing to remove'}` : ''}`;
}
