// Small building blocks: status chips, buttons, fields, banners, icons.
import { useId, type ButtonHTMLAttributes, type ReactElement, type ReactNode } from 'react';
import { TONE, type DisplayStatus } from '../store/status.js';
import type { JobStatus } from '../../../contract/calls.js';

export function StatusChip({ status, count, title }: { status: DisplayStatus | JobStatus; count?: number; title?: string }): ReactElement {
  const tone = TONE[status] ?? 'neutral';
  return (
    <span className={`chip tone-${tone}`} title={title ?? status} data-status={status}>
      <span className="chip-dot" aria-hidden="true" />
      {status}
      {count !== undefined && <span className="chip-count">{count}</span>}
    </span>
  );
}

export function Spinner({ label }: { label?: string }): ReactElement {
  return <span className="spinner" role={label ? 'status' : undefined} aria-label={label} />;
}

type ButtonProps = ButtonHTMLAttributes<HTMLButtonElement> & {
  variant?: 'default' | 'primary' | 'danger' | 'ghost';
  size?: 'sm' | 'md';
  busy?: boolean;
  icon?: IconName;
};

export function Button({ variant = 'default', size = 'md', busy = false, icon, children, className, disabled, ...rest }: ButtonProps): ReactElement {
  return (
    <button type="button" {...rest} className={`btn btn-${variant} btn-${size} ${className ?? ''}`} disabled={disabled || busy} aria-busy={busy || undefined}>
      {busy ? <Spinner /> : icon ? <Icon name={icon} /> : null}
      {children}
    </button>
  );
}

export function Field({ label, error, hint, children, className }: { label: string; error?: string | undefined; hint?: ReactNode; className?: string; children: (props: { id: string; 'aria-invalid'?: true; 'aria-describedby'?: string }) => ReactNode }): ReactElement {
  const id = useId();
  const described = [error ? `${id}-err` : '', hint ? `${id}-hint` : ''].filter(Boolean).join(' ');
  return (
    <div className={`field ${error ? 'field-invalid' : ''} ${className ?? ''}`}>
      <label htmlFor={id}>{label}</label>
      {children({ id, ...(error ? { 'aria-invalid': true as const } : {}), ...(described ? { 'aria-describedby': described } : {}) })}
      {error && (
        <div className="field-error" id={`${id}-err`} role="alert">
          {error}
        </div>
      )}
      {hint && !error && (
        <div className="field-hint" id={`${id}-hint`}>
          {hint}
        </div>
      )}
    </div>
  );
}

export function Banner({ tone, children }: { tone: 'danger' | 'warning' | 'info' | 'success'; children: ReactNode }): ReactElement {
  return (
    <div className={`banner banner-${tone}`} role={tone === 'danger' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }): ReactElement {
  return (
    <div className="empty">
      <div className="empty-title">{title}</div>
      {children && <div className="empty-body">{children}</div>}
    </div>
  );
}

export function PageHeader({ title, sub, children }: { title: ReactNode; sub?: ReactNode; children?: ReactNode }): ReactElement {
  return (
    <header className="page-header">
      <div className="page-title">
        <h1 tabIndex={-1}>{title}</h1>
        {sub && <div className="page-sub">{sub}</div>}
      </div>
      {children && <div className="page-actions">{children}</div>}
    </header>
  );
}

export function Section({ title, actions, children, className }: { title: ReactNode; actions?: ReactNode; children: ReactNode; className?: string }): ReactElement {
  return (
    <section className={`section ${className ?? ''}`}>
      <div className="section-head">
        <h2>{title}</h2>
        {actions && <div className="section-actions">{actions}</div>}
      </div>
      <div className="section-body">{children}</div>
    </section>
  );
}

export type IconName = 'play' | 'restart' | 'stop' | 'pause' | 'edit' | 'plus' | 'x' | 'chevron-right' | 'chevron-down' | 'sun' | 'moon' | 'auto' | 'eye' | 'today' | 'timeline' | 'jobs' | 'workers' | 'health' | 'copy' | 'trash';

const PATHS: Record<IconName, string> = {
  play: 'M5 3.5v9l7.5-4.5z',
  restart: 'M3 8a5 5 0 1 0 1.6-3.7M3 2.5v3h3',
  stop: 'M4.5 4.5h7v7h-7z',
  pause: 'M5 3.5v9M11 3.5v9',
  edit: 'M10.5 2.5l3 3L6 13H3v-3z',
  plus: 'M8 3v10M3 8h10',
  x: 'M4 4l8 8M12 4l-8 8',
  'chevron-right': 'M6 3.5L10.5 8 6 12.5',
  'chevron-down': 'M3.5 6L8 10.5 12.5 6',
  sun: 'M8 5a3 3 0 1 0 0 6 3 3 0 0 0 0-6zM8 1v2M8 13v2M1 8h2M13 8h2M3 3l1.4 1.4M11.6 11.6L13 13M3 13l1.4-1.4M11.6 4.4L13 3',
  moon: 'M13 9.5A5.5 5.5 0 0 1 6.5 3 5.5 5.5 0 1 0 13 9.5z',
  auto: 'M8 2a6 6 0 1 0 0 12V2z M8 2a6 6 0 1 1 0 12',
  eye: 'M1.5 8S4 3.5 8 3.5 14.5 8 14.5 8 12 12.5 8 12.5 1.5 8 1.5 8zM8 6a2 2 0 1 0 0 4 2 2 0 0 0 0-4z',
  today: 'M2.5 3.5h11v10h-11zM2.5 6.5h11M5 2v3M11 2v3',
  timeline: 'M2 4h7M4 8h9M2 12h5',
  jobs: 'M3 3h4v4H3zM9 9h4v4H9zM7 5h2.5a1.5 1.5 0 0 1 1.5 1.5V9',
  workers: 'M2.5 3h11v4h-11zM2.5 9h11v4h-11zM5 5h.01M5 11h.01',
  health: 'M1.5 8.5h3l2-4 3 7 2-3h3',
  copy: 'M5.5 5.5h7v7h-7zM3.5 10.5v-7h7',
  trash: 'M3 4.5h10M6 4.5V3h4v1.5M4.5 4.5l.5 9h6l.5-9',
};

export function Icon({ name, size = 14 }: { name: IconName; size?: number }): ReactElement {
  const filled = name === 'play' || name === 'stop';
  return (
    <svg className="icon" width={size} height={size} viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      <path d={PATHS[name]} fill={filled ? 'currentColor' : 'none'} stroke="currentColor" strokeWidth="1.5" strokeLinecap="round" strokeLinejoin="round" />
    </svg>
  );
}

/** Key–value rows for definitions and status. */
export function Props({ rows }: { rows: [string, ReactNode][] }): ReactElement {
  return (
    <dl className="props">
      {rows.map(([k, v]) => (
        <div className="prop" key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}
