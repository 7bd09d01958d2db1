// Workers: the hosts that run batch jobs and routines addressed to them.
import type { ReactElement } from 'react';
import { clock, relative } from '../store/format.js';
import { useNow, useTend, useWatch } from '../ui/context.js';
import { Banner, Empty, PageHeader, Section, Spinner } from '../ui/parts.js';

const SILENT_MS = 5 * 60_000;

export function WorkersPage(): ReactElement {
  useWatch('workers');
  const workers = useTend((s) => s.workers);
  const load = useTend((s) => s.workersLoad);
  const error = useTend((s) => s.errors.workers);
  const now = useNow(1000);
  const online = workers.filter((w) => w.lastSeen !== null && now - w.lastSeen < SILENT_MS).length;
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
              </tr>
            </thead>
            <tbody>
              {workers.map((w) => {
                const fresh = w.lastSeen !== null && now - w.lastSeen < SILENT_MS;
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
                      <span className="meter" aria-label={`${running} of ${slots} slots busy`}>
                        <span className="meter-fill" style={{ width: `${slots ? Math.min(100, (running / slots) * 100) : 0}%` }} />
                      </span>
                      <span className="tabular">
                        {running} / {slots}
                      </span>
                    </td>
                    <td className="tabular muted">{w.registeredAt ? clock(w.registeredAt, now) : '—'}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </Section>
    </div>
  );
}
