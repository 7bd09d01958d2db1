// Run now / Restart / Stop for one routine: each shows its progress while the call runs and
// its result after, and follows the run it started until it settles.
import type { ReactElement } from 'react';
import type { RoutineSummary } from '../../../contract/calls.js';
import { routinePath } from '../store/format.js';
import { displayStatus, isActiveRun } from '../store/status.js';
import type { RoutineOp } from '../store/store.js';
import { useNow, useServices, useTend } from './context.js';
import { Button, StatusChip } from './parts.js';

const RESULT_MS = 20_000;

export function RoutineActions({ routine, size = 'sm', showResult = true }: { routine: RoutineSummary; size?: 'sm' | 'md'; showResult?: boolean }): ReactElement | null {
  const { store } = useServices();
  const action = useTend((s) => s.actions[routine.id]);
  if (routine.external) return <span className="muted small" title="Started by nobody: it reports over the API">external</span>;
  const status = displayStatus(routine);
  const active = isActiveRun(routine.lastRun?.status) || isActiveRun(routine.today);
  const observe = routine.observeOnly;
  const busy = action?.phase === 'busy' ? action.op : null;
  const act = (op: RoutineOp) => void store.getState().act(routine.id, op);
  const who = routinePath(routine.id);
  const observeWhy = 'Observe-only schedule: Tend tracks status but sends no commands';
  const runLabel = routine.kind === 'realtime' ? 'Start' : 'Run now';
  return (
    <div className="actions" data-routine={routine.id}>
      <Button size={size} icon="play" busy={busy === 'run'} disabled={!!busy || observe || (routine.kind === 'realtime' && active)} title={observe ? observeWhy : routine.kind === 'realtime' && active ? 'Already running' : undefined} aria-label={`${runLabel} ${who}`} onClick={() => act('run')}>
        {runLabel}
      </Button>
      <Button size={size} icon="restart" busy={busy === 'restart'} disabled={!!busy || observe} title={observe ? observeWhy : undefined} aria-label={`Restart ${who}`} onClick={() => act('restart')}>
        Restart
      </Button>
      <Button size={size} icon="stop" busy={busy === 'stop'} disabled={!!busy || !active} title={!active ? `Nothing running (${status})` : undefined} aria-label={`Stop ${who}`} onClick={() => act('stop')}>
        Stop
      </Button>
      {showResult && <ActionResult routine={routine} />}
    </div>
  );
}

function ActionResult({ routine }: { routine: RoutineSummary }): ReactElement | null {
  const action = useTend((s) => s.actions[routine.id]);
  const now = useNow(action && action.phase !== 'busy' ? 1000 : 60_000);
  if (!action || action.phase === 'busy') return <span className="action-result" aria-live="polite" />;
  const tracked = action.runId && routine.lastRun?.id === action.runId ? routine.lastRun.status : null;
  const fresh = now - action.at < RESULT_MS || (tracked !== null && isActiveRun(tracked));
  if (!fresh) return <span className="action-result" aria-live="polite" />;
  return (
    <span className={`action-result ${action.phase === 'error' ? 'is-error' : ''}`} aria-live="polite" title={action.message}>
      {action.phase === 'error' ? action.message : action.op === 'run' || action.op === 'restart' ? 'Started' : action.message}
      {tracked && <StatusChip status={tracked} />}
    </span>
  );
}
