// Workers: the hosts that run batch jobs and routines addressed to them.
import { useState, type ReactElement } from 'react';
import { clock, relative } from '../store/format.js';
import { useNow, useServices, useTend, useWatch } from '../ui/context.js';
import { Banner, Button, Empty, PageHeader, Section, Spinner } from '../ui/parts.js';


export function WorkersPage(): ReactElement {
  useWatch('workers');
  const workers = useTend((s) => s.workers);
  const load = useTend((s) => s.workersLoad);
  const error = useTend((s) => s.errors.workers);
  const now = useNow(1000);
  const online = workers.filter((w) => w.online).length;
  return (
    <div className="page">
      <PageHeader title="Workers" sub={`${workers.length} host${workers.length === 1 ? '' : 's'} · ${online} seen in the last 5 minutes`} />
      {error && <Banner tone="danger">Could not load workers: {error}</Banner>}
      <Section title="Hosts">
        {load !== 'ready' && !error ? (
          <div className="loading">
            <Spinner label="Loading workers" /> Loading…
          </div>
        ) : workers.length === 0 ? (
          <Empty title="No worker hosts registered">
            This machine runs its own routines. To add a host, start on it: <code>tend worker --server URL --token TOKEN --computer user@HOST</code>
          </Empty>
        ) : (
          <table className="grid-table">
            <thead>
              <tr>
                <th scope="col">Host</th>
                <th scope="col">State</th>
                <th scope="col">Last seen</th>
                <th scope="col">Version</th>
                <th scope="col">Slots</th>
                <th scope="col">Running jobs</th>
                <th scope="col">Registered</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {workers.map((w) => {
                const fresh = w.online;
                const slots = w.slots ?? 0;
                const running = w.running ?? 0;
                return (
                  <tr key={w.computer} data-worker={w.computer}>
                    <td className="strong">{w.computer}</td>
                    <td>
                      <span className={`chip tone-${fresh ? 'success' : 'warning'}`}>
                        <span className="chip-dot" aria-hidden="true" />
                        {fresh ? 'online' : 'not seen'}
                      </span>
                    </td>
                    <td className="tabular" title={w.lastSeen ? clock(w.lastSeen, now) : undefined}>
                      {w.lastSeen ? relative(w.lastSeen, now) : 'never'}
                    </td>
                    <td>{w.version ?? '—'}</td>
                    <td className="tabular">{slots}</td>
                    <td>
                      <span className="meter" role="img" aria-label={`${running} of ${slots} slots busy`}>
                        <span className="meter-fill" style={{ width: `${slots ? Math.min(100, (running / slots) * 100) : 0}%` }} />
                      </span>
                      <span className="tabular">
                        {running} / {slots}
                      </span>
                    </td>
                    <td className="tabular muted">{w.registeredAt ? clock(w.registeredAt, now) : '—'}</td>
                    <td>{!fresh && <ForgetWorker computer={w.computer} />}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </Section>
      <ForgetResult />
    </div>
  );
}

/** Two clicks: forgetting ends the host's runs with an unknown outcome and revokes its token. */
function ForgetWorker({ computer }: { computer: string }): ReactElement {
  const { store } = useServices();
  const action = useTend((s) => s.actions[`worker:${computer}`]);
  const [asking, setAsking] = useState(false);
  if (action?.phase === 'error') return <span className="text-danger small">{action.message}</span>;
  if (!asking) {
    return (
      <Button size="sm" variant="ghost" icon="x" aria-label={`Forget ${computer}`} title="Gone for good? Its runs end unknown, claimed jobs go back to the queue, its token stops working" onClick={() => setAsking(true)}>
        Forget…
      </Button>
    );
  }
  return (
    <span className="inline-confirm" role="group" aria-label={`Forget ${computer}?`}>
      <Button size="sm" variant="danger" busy={action?.phase === 'busy'} onClick={() => void store.getState().forgetWorker(computer)}>
        Forget {computer}
      </Button>
      <Button size="sm" variant="ghost" onClick={() => setAsking(false)}>
        Keep
      </Button>
    </span>
  );
}

function ForgetResult(): ReactElement | null {
  const done = useTend((s) => Object.entries(s.actions).find(([k, a]) => k.startsWith('worker:') && a.phase === 'done')?.[1]);
  return done ? <Banner tone="success">{done.message}</Banner> : null;
}
