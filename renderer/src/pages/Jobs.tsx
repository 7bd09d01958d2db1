// Batch jobs: one-off commands with dependencies. A list with filters, the dependency graph,
// a form to post a job, cancel.
import { useVirtualizer } from '@tanstack/react-virtual';
import { useMemo, useRef, useState, type FormEvent, type ReactElement } from 'react';
import type { Issue, JobRow, JobStatus } from '../../../contract/calls.js';
import { clock, duration } from '../store/format.js';
import { graphJobs, layerJobs, NODE_H, NODE_W } from '../store/graph.js';
import { ACTIVE_JOB, JOB_STATUSES, TONE } from '../store/status.js';
import { useNow, useServices, useTend, useWatch } from '../ui/context.js';
import { Banner, Button, Empty, Field, PageHeader, Section, Spinner, StatusChip } from '../ui/parts.js';

const ROW = 36;

/** Split like a shell would, for the common cases: spaces, and '…' or "…" quoting. */
export function splitArgs(s: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(s); m; m = re.exec(s)) out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : (m[2] ?? m[3] ?? ''));
  return out;
}

export function JobsPage(): ReactElement {
  useWatch('jobs', 'routines');
  const jobs = useTend((s) => s.jobs);
  const load = useTend((s) => s.jobsLoad);
  const error = useTend((s) => s.errors.jobs);
  const [status, setStatus] = useState<JobStatus | ''>('');
  const [text, setText] = useState('');
  const shown = useMemo(() => {
    const t = text.trim().toLowerCase();
    return jobs
      .filter((j) => (!status || j.status === status) && (!t || j.name.toLowerCase().includes(t) || j.command.toLowerCase().includes(t) || String(j.id) === t || (j.computer ?? '').includes(t)))
      .sort((a, b) => b.id - a.id);
  }, [jobs, status, text]);
  const counts = useMemo(() => {
    const c: Partial<Record<JobStatus, number>> = {};
    for (const j of jobs) c[j.status] = (c[j.status] ?? 0) + 1;
    return c;
  }, [jobs]);
  return (
    <div className="page">
      <PageHeader title="Batch jobs" sub={`${jobs.length} job${jobs.length === 1 ? '' : 's'} · ${jobs.filter((j) => ACTIVE_JOB.has(j.status)).length} not finished`} />
      {error && <Banner tone="danger">Could not load jobs: {error}</Banner>}
      <div className="grid-2 grid-jobs">
        <Section title="Post a job">
          <PostJob />
        </Section>
        <Section title="Dependencies">
          <Graph jobs={shown} />
        </Section>
      </div>
      <Section
        title="Jobs"
        actions={
          <div className="filter-controls">
            <label className="inline-field">
              <span>Status</span>
              <select value={status} onChange={(e) => setStatus(e.target.value as JobStatus | '')}>
                <option value="">Any ({jobs.length})</option>
                {JOB_STATUSES.map((s) => (
                  <option key={s} value={s}>
                    {s} ({counts[s] ?? 0})
                  </option>
                ))}
              </select>
            </label>
            <label className="inline-field">
              <span>Search</span>
              <input type="search" value={text} placeholder="Name, command, id" onChange={(e) => setText(e.target.value)} />
            </label>
          </div>
        }
      >
        {load !== 'ready' && !error ? (
          <div className="loading">
            <Spinner label="Loading jobs" /> Loading jobs…
          </div>
        ) : shown.length === 0 ? (
          <Empty title={jobs.length ? 'No job matches' : 'No batch jobs yet'}>{jobs.length ? null : 'Post one with the form above, or `tend job post -- CMD`.'}</Empty>
        ) : (
          <JobTable jobs={shown} />
        )}
      </Section>
    </div>
  );
}

function JobTable({ jobs }: { jobs: JobRow[] }): ReactElement {
  const scroller = useRef<HTMLDivElement>(null);
  const now = useNow(1000);
  const v = useVirtualizer({ count: jobs.length, getScrollElement: () => scroller.current, estimateSize: () => ROW, overscan: 10, getItemKey: (i) => jobs[i]!.id });
  return (
    <div className="table jobs-table" role="table" aria-label="Batch jobs">
      <div className="thead" role="rowgroup">
        <div className="tr jobs-grid" role="row">
          <span role="columnheader">#</span>
          <span role="columnheader">Status</span>
          <span role="columnheader">Job</span>
          <span role="columnheader">After</span>
          <span role="columnheader">Computer</span>
          <span role="columnheader">Started</span>
          <span role="columnheader">Duration</span>
          <span role="columnheader">Reason</span>
          <span role="columnheader">
            <span className="sr-only">Actions</span>
          </span>
        </div>
      </div>
      <div className="tbody scroll jobs-scroll" ref={scroller} role="rowgroup" tabIndex={0} aria-label="Job rows (scrollable)" style={{ height: Math.min(jobs.length * ROW + 2, 480) }}>
        <div style={{ height: v.getTotalSize(), position: 'relative' }}>
          {v.getVirtualItems().map((item, _, items) => {
            const j = jobs[item.index]!;
            // Keyed by slot (see Today): rows scrolled in reuse the DOM of rows scrolled out.
            return (
              <div key={item.index % items.length} className="vrow tr jobs-grid" role="row" data-job={j.id} data-status={j.status} style={{ transform: `translateY(${item.start}px)`, height: ROW }}>
                <span role="cell" className="tabular muted">
                  {j.id}
                </span>
                <span role="cell">
                  <StatusChip status={j.status} />
                </span>
                <span role="cell" className="truncate" title={[j.command, ...j.args].join(' ')}>
                  <span className="strong">{j.name}</span> <span className="muted small mono">{[j.command, ...j.args].join(' ')}</span>
                </span>
                <span role="cell" className="tabular muted truncate">
                  {j.dependencies.length ? j.dependencies.map((d) => `#${d}`).join(', ') : '—'}
                </span>
                <span role="cell" className="truncate muted">
                  {j.computer ?? (j.backend ? `any → ${j.backend}` : 'any')}
                </span>
                <span role="cell" className="tabular">
                  {clock(j.startedAt, now)}
                </span>
                <span role="cell" className="tabular">
                  {j.startedAt ? duration((j.endedAt ?? now) - j.startedAt) : '—'}
                </span>
                <span role="cell" className="truncate muted" title={j.reason ?? undefined}>
                  {j.status === 'COMPLETED' ? '' : (j.reason ?? (j.exitCode !== null ? `exit ${j.exitCode}` : ''))}
                </span>
                <span role="cell">
                  <CancelJob job={j} />
                </span>
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}

function CancelJob({ job }: { job: JobRow }): ReactElement | null {
  const { store } = useServices();
  const action = useTend((s) => s.actions[`job:${job.id}`]);
  if (!ACTIVE_JOB.has(job.status)) return action?.phase === 'error' ? <span className="text-danger small">{action.message}</span> : null;
  return (
    <Button size="sm" variant="ghost" icon="x" busy={action?.phase === 'busy'} aria-label={`Cancel job ${job.id}`} onClick={() => void store.getState().cancelJob(job.id)}>
      Cancel
    </Button>
  );
}

function PostJob(): ReactElement {
  const { store } = useServices();
  const computers = useTend((s) => s.routines);
  const known = useMemo(() => [...new Set(computers.map((r) => r.computer))].sort(), [computers]);
  const [form, setForm] = useState({ name: '', command: '', args: '', after: '', computer: '' });
  const [issues, setIssues] = useState<Issue[]>([]);
  const [result, setResult] = useState<{ tone: 'success' | 'danger'; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const err = (field: string) => issues.filter((i) => i.path.split('.')[0] === field).map((i) => i.message).join('; ') || undefined;
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const after = form.after.split(/[\s,]+/).filter(Boolean).map((s) => Number(s.replace(/^#/, '')));
    const bad = after.find((n) => !Number.isSafeInteger(n) || n <= 0);
    if (bad !== undefined) return setIssues([{ path: 'after', message: 'job ids are positive whole numbers, e.g. 12, 14' }]);
    setBusy(true);
    const r = await store.getState().postJob({
      command: form.command.trim(),
      ...(form.name.trim() ? { name: form.name.trim() } : {}),
      ...(form.args.trim() ? { args: splitArgs(form.args) } : {}),
      ...(after.length ? { after } : {}),
      ...(form.computer.trim() ? { computer: form.computer.trim() } : {}),
    });
    setBusy(false);
    if (r.ok) {
      setIssues([]);
      setResult({ tone: 'success', text: `Posted job #${r.value.id} (${r.value.status})` });
      setForm({ name: '', command: '', args: '', after: '', computer: form.computer });
    } else {
      setIssues(r.error.issues ?? []);
      setResult({ tone: 'danger', text: r.error.issues?.length ? 'Not posted: fix the fields below.' : r.error.message });
    }
  };
  const bind = (k: keyof typeof form) => ({ value: form[k], onChange: (e: { target: { value: string } }) => setForm((f) => ({ ...f, [k]: e.target.value })) });
  return (
    <form className="form post-job" onSubmit={(e) => void submit(e)} noValidate>
      {result && <Banner tone={result.tone}>{result.text}</Banner>}
      <div className="form-row">
        <Field label="Command" error={err('command')} hint="The program to run">
          {(p) => <input {...p} {...bind('command')} required placeholder="/usr/local/bin/fetch" autoComplete="off" />}
        </Field>
        <Field label="Arguments" error={err('args')} hint="Space separated; quote to keep spaces">
          {(p) => <input {...p} {...bind('args')} placeholder="--day today" autoComplete="off" />}
        </Field>
      </div>
      <div className="form-row">
        <Field label="After jobs" error={err('after')} hint="Job ids this waits for, e.g. 12, 14">
          {(p) => <input {...p} {...bind('after')} placeholder="12, 14" autoComplete="off" />}
        </Field>
        <Field label="Computer" error={err('computer')} hint="user@HOST, or any worker with free slots">
          {(p) => (
            <>
              <input {...p} {...bind('computer')} list="job-computers" placeholder="any" autoComplete="off" />
              <datalist id="job-computers">
                {known.map((c) => (
                  <option key={c} value={c} />
                ))}
              </datalist>
            </>
          )}
        </Field>
        <Field label="Name" error={err('name')} hint="Optional">
          {(p) => <input {...p} {...bind('name')} placeholder="from the command" autoComplete="off" />}
        </Field>
      </div>
      <div className="form-foot">
        <Button type="submit" variant="primary" icon="plus" busy={busy}>
          Post job
        </Button>
      </div>
    </form>
  );
}

function Graph({ jobs }: { jobs: JobRow[] }): ReactElement {
  const layout = useMemo(() => layerJobs(graphJobs(jobs)), [jobs]);
  if (layout.nodes.length === 0) return <Empty title="No jobs to draw" />;
  const withDeps = layout.edges.length;
  return (
    <div className="graph scroll" role="img" tabIndex={0} aria-label={`Dependency graph of ${layout.nodes.length} jobs with ${withDeps} dependencies`}>
      <svg width={layout.width} height={layout.height} viewBox={`0 0 ${layout.width} ${layout.height}`}>
        <defs>
          <marker id="arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto">
            <path d="M0,0 L8,4 L0,8 z" className="graph-arrow" />
          </marker>
        </defs>
        {layout.edges.map((e) => {
          const x1 = e.from.x + NODE_W;
          const y1 = e.from.y + NODE_H / 2;
          const x2 = e.to.x;
          const y2 = e.to.y + NODE_H / 2;
          const mx = (x1 + x2) / 2;
          return <path key={`${e.from.job.id}-${e.to.job.id}`} className="graph-edge" d={`M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2 - 2},${y2}`} markerEnd="url(#arrow)" />;
        })}
        {layout.nodes.map((n) => (
          <g key={n.job.id} transform={`translate(${n.x},${n.y})`} className={`graph-node tone-${TONE[n.job.status]}`} data-job={n.job.id}>
            <rect width={NODE_W} height={NODE_H} rx="6" />
            <circle cx="12" cy={NODE_H / 2} r="4" className="graph-dot" />
            <text x="22" y="16" className="graph-title">
              #{n.job.id} {n.job.name.length > 16 ? `${n.job.name.slice(0, 15)}…` : n.job.name}
            </text>
            <text x="22" y="31" className="graph-sub">
              {n.job.status}
            </text>
          </g>
        ))}
      </svg>
    </div>
  );
}
