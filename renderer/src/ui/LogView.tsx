// A run's stdout or stderr as it is written (SSE in a browser, polling over IPC), kept scrolled
// to the end unless the reader scrolled up.
import { useEffect, useLayoutEffect, useRef, useState, type ReactElement } from 'react';
import type { LogStream } from '../api/client.js';
import { useServices } from './context.js';
import { Spinner } from './parts.js';

const MAX_CHARS = 512 * 1024;

export function LogView({ runId }: { runId: string | null }): ReactElement {
  const { client } = useServices();
  const [stream, setStream] = useState<LogStream>('stdout');
  const [text, setText] = useState('');
  const [state, setState] = useState<{ following: boolean; ended: string | null }>({ following: false, ended: null });
  const box = useRef<HTMLPreElement>(null);
  const pinned = useRef(true);

  useEffect(() => {
    setText('');
    pinned.current = true;
    if (!runId) return setState({ following: false, ended: null });
    setState({ following: true, ended: null });
    return client.follow(runId, stream, {
      chunk: (t) => setText((prev) => (prev.length + t.length > MAX_CHARS ? (prev + t).slice(-MAX_CHARS) : prev + t)),
      end: (reason) => setState({ following: false, ended: reason }),
    });
  }, [client, runId, stream]);

  useLayoutEffect(() => {
    const el = box.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  }, [text]);

  const tabs: LogStream[] = ['stdout', 'stderr'];
  return (
    <div className="log">
      <div className="log-head">
        <div role="tablist" aria-label="Stream" className="tabs">
          {tabs.map((t) => (
            <button
              key={t}
              type="button"
              role="tab"
              id={`log-tab-${t}`}
              aria-selected={stream === t}
              aria-controls="log-panel"
              tabIndex={stream === t ? 0 : -1}
              className={`tab ${stream === t ? 'is-active' : ''}`}
              onClick={() => setStream(t)}
              onKeyDown={(e) => {
                if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
                  const next = tabs[(tabs.indexOf(t) + 1) % 2]!;
                  setStream(next);
                  document.getElementById(`log-tab-${next}`)?.focus();
                }
              }}
            >
              {t}
            </button>
          ))}
        </div>
        <span className="log-state" role="status">
          {!runId ? 'No run yet' : state.following ? (
            <>
              <span className="live-dot" aria-hidden="true" /> Following
            </>
          ) : state.ended ? (
            `Ended (${state.ended})`
          ) : (
            <Spinner />
          )}
        </span>
      </div>
      <pre
        ref={box}
        id="log-panel"
        role="tabpanel"
        aria-labelledby={`log-tab-${stream}`}
        aria-live="off"
        tabIndex={0}
        className="log-body"
        data-testid="log-body"
        onScroll={(e) => {
          const el = e.currentTarget;
          pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
        }}
      >
        {text || <span className="muted">{runId ? (state.following ? 'Waiting for output…' : 'No output.') : 'Nothing has run yet.'}</span>}
      </pre>
    </div>
  );
}
