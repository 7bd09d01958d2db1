// The window: navigation, connection state, theme switch, and the routed page.
import { useEffect, useRef, type ReactElement } from 'react';
import { EditorPage } from '../pages/Editor.js';
import { HealthPage } from '../pages/Health.js';
import { JobsPage } from '../pages/Jobs.js';
import { RoutinePage } from '../pages/Routine.js';
import { TimelinePage } from '../pages/Timeline.js';
import { TodayPage } from '../pages/Today.js';
import { WorkersPage } from '../pages/Workers.js';
import { useHash, useTend } from './context.js';
import { Banner, Icon, type IconName } from './parts.js';
import { href, parseRoute, type Route } from './router.js';
import { useTheme, type ThemePref } from './theme.js';

const NAV: { page: Route['page']; label: string; icon: IconName; to: string }[] = [
  { page: 'today', label: 'Today', icon: 'today', to: href.today() },
  { page: 'timeline', label: 'Timeline', icon: 'timeline', to: href.timeline() },
  { page: 'jobs', label: 'Batch jobs', icon: 'jobs', to: href.jobs() },
  { page: 'workers', label: 'Workers', icon: 'workers', to: href.workers() },
  { page: 'health', label: 'Health', icon: 'health', to: href.health() },
];

const NEXT_THEME: Record<ThemePref, ThemePref> = { system: 'light', light: 'dark', dark: 'system' };
const THEME_ICON: Record<ThemePref, IconName> = { system: 'auto', light: 'sun', dark: 'moon' };

export function App(): ReactElement {
  const route = parseRoute(useHash());
  const [theme, setTheme] = useTheme();
  const main = useRef<HTMLElement>(null);
  const routeKey = JSON.stringify(route);
  const firstRoute = useRef(true);
  useEffect(() => {
    // A new page (not the first): move focus to its heading, so keyboard and screen-reader
    // users continue from the page they opened rather than from the top of the window.
    if (firstRoute.current) {
      firstRoute.current = false;
      return;
    }
    main.current?.querySelector<HTMLElement>('h1')?.focus({ preventScroll: true });
  }, [routeKey]);
  return (
    <div className="app">
      <a className="skip" href="#main" onClick={(e) => (e.preventDefault(), main.current?.focus())}>
        Skip to content
      </a>
      <nav className="sidebar" aria-label="Pages">
        <div className="brand">
          <span className="brand-mark" aria-hidden="true" />
          Tend
        </div>
        <ul>
          {NAV.map((n) => (
            <li key={n.page}>
              <a href={n.to} className={`nav-link ${route.page === n.page || (n.page === 'today' && route.page === 'routine') ? 'is-active' : ''}`} aria-current={route.page === n.page ? 'page' : undefined}>
                <Icon name={n.icon} />
                {n.label}
              </a>
            </li>
          ))}
        </ul>
        <a href={href.newRoutine()} className={`nav-link nav-new ${route.page === 'editor' ? 'is-active' : ''}`}>
          <Icon name="plus" />
          New routine
        </a>
        <div className="sidebar-foot">
          <Connection />
          <button type="button" className="btn btn-ghost btn-sm theme-toggle" onClick={() => setTheme(NEXT_THEME[theme])} aria-label={`Theme: ${theme}. Switch to ${NEXT_THEME[theme]}`} title={`Theme: ${theme}`}>
            <Icon name={THEME_ICON[theme]} />
            {/* The accessible name starts with this visible text (WCAG 2.5.3, label in name). */}
            Theme: {theme}
          </button>
        </div>
      </nav>
      <main id="main" ref={main} tabIndex={-1} className="main">
        <ConnectionBanner />
        <Page route={route} />
      </main>
    </div>
  );
}

function Page({ route }: { route: Route }): ReactElement {
  switch (route.page) {
    case 'today':
      return <TodayPage />;
    case 'timeline':
      return <TimelinePage />;
    case 'routine':
      return <RoutinePage key={route.id} id={route.id} />;
    case 'jobs':
      return <JobsPage />;
    case 'workers':
      return <WorkersPage />;
    case 'health':
      return <HealthPage />;
    case 'editor':
      return <EditorPage key={route.id ?? 'new'} id={route.id} />;
  }
}

/** Say so when the page cannot talk to the engine, and what to do. */
function ConnectionBanner(): ReactElement | null {
  const connection = useTend((s) => s.connection);
  if (connection === 'unauthorized') {
    return (
      <div className="conn-banner">
        <Banner tone="danger">
          The daemon refused this page's token. Open or paste here the address <code>tend daemon run</code> or <code>tend daemon ensure</code> printed (it ends in <code>#token=…</code>); the token is also in <code>api.json</code> in the data dir.
        </Banner>
      </div>
    );
  }
  if (connection === 'offline') {
    return (
      <div className="conn-banner">
        <Banner tone="warning">Lost the connection to the engine; reconnecting… What you see may be out of date.</Banner>
      </div>
    );
  }
  return null;
}

function Connection(): ReactElement {
  const connection = useTend((s) => s.connection);
  const where = useTend((s) => s.where);
  const label = { connecting: 'Connecting…', live: 'Live', offline: 'Reconnecting…', unauthorized: 'Not authorised' }[connection];
  return (
    <div className={`conn conn-${connection}`} role="status" title={where}>
      <span className="conn-dot" aria-hidden="true" />
      <span>
        {label}
        <span className="conn-where">{where}</span>
      </span>
    </div>
  );
}
