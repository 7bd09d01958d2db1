// Create or edit a routine: every timing mode, a preview of the next 5 runs computed by the
// engine, and the server's validation issues shown on the fields they name.
import { useEffect, useMemo, useState, type FormEvent, type ReactElement } from 'react';
import type { Args, Issue } from '../../../contract/calls.js';
import { changesFrom, emptyForm, fieldOf, formFromDef, inputFromForm, issuesByField, timingOf, TIMING_HELP, TIMING_MODES, type EditorForm, type FieldName } from '../store/editor.js';
import { relative, stamp } from '../store/format.js';
import { useNow, useServices, useTend, useWatch } from '../ui/context.js';
import { Banner, Button, Field, PageHeader, Section, Spinner } from '../ui/parts.js';
import { href } from '../ui/router.js';

const LOCAL_TZ = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
const ZONES: string[] = (() => {
  try {
    return (Intl as unknown as { supportedValuesOf(k: string): string[] }).supportedValuesOf('timeZone');
  } catch {
    return [LOCAL_TZ];
  }
})();

export function EditorPage({ id }: { id: string | null }): ReactElement {
  useWatch('routines', ...(id ? ([`routine:${id}`] as const) : []));
  const detail = useTend((s) => (id ? s.details[id] : undefined));
  const error = useTend((s) => (id ? s.detailErrors[id] : undefined));
  if (id && !detail) {
    return (
      <div className="page">
        <PageHeader title="Edit routine" sub={id} />
        {error ? <Banner tone="danger">{error}</Banner> : <div className="loading"><Spinner label="Loading" /> Loading…</div>}
      </div>
    );
  }
  return <EditorBody initial={detail ? formFromDef(detail.definition) : null} />;
}

function EditorBody({ initial }: { initial: EditorForm | null }): ReactElement {
  const { client, store } = useServices();
  const routines = useTend((s) => s.routines);
  const editing = initial !== null;
  const suggestedComputer = useMemo(() => mostCommon(routines.map((r) => r.computer)), [routines]);
  const [form, setForm] = useState<EditorForm>(() => initial ?? { ...emptyForm(LOCAL_TZ), id: suggestedComputer ? `${suggestedComputer}:` : '' });
  const [issues, setIssues] = useState<Issue[]>([]);
  const [banner, setBanner] = useState<{ tone: 'danger' | 'success'; text: string } | null>(null);
  const [saving, setSaving] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const errors = issuesByField(issues);
  const set = <K extends keyof EditorForm>(k: K, v: EditorForm[K]) => {
    setForm((f) => ({ ...f, [k]: v }));
    // A changed field's old message no longer applies (the next save or preview says again).
    const touched: FieldName = k === 'mode' || k === 'timing' ? 'timing' : k === 'retryEvery' || k === 'retryFor' ? 'retry' : k;
    setIssues((list) => (list.some((i) => fieldOf(i.path) === touched) ? list.filter((i) => fieldOf(i.path) !== touched) : list));
  };
  const preview = usePreview(form);
  const timingError = errors.timing ?? (preview.issues.length ? preview.issues.map((i) => i.message).join('; ') : undefined);
  const sameSchedule = useMemo(() => routines.filter((r) => r.schedule === (form.schedule.trim() || 'default') && r.id !== form.id).map((r) => r.id), [routines, form.schedule, form.id]);

  const save = async (e: FormEvent) => {
    e.preventDefault();
    setBanner(null);
    let local: Issue[];
    let result;
    setSaving(true);
    if (editing) {
      const { changes, issues: li } = changesFrom(initial, form);
      local = li;
      if (!local.length && Object.keys(changes).length === 0) {
        setSaving(false);
        setIssues([]);
        return setBanner({ tone: 'success', text: 'Nothing changed.' });
      }
      result = local.length ? null : await client.call('routines.edit', { id: form.id, changes });
    } else {
      const { input, issues: li } = inputFromForm(form);
      local = li;
      result = local.length ? null : await client.call('routines.create', input as Args<'routines.create'>);
    }
    setSaving(false);
    if (!result) {
      setIssues(local);
      focusFirstInvalid();
      return setBanner({ tone: 'danger', text: 'Not saved: fix the fields marked below.' });
    }
    if (!result.ok) {
      const list = result.error.issues?.length ? result.error.issues : [{ path: '', message: result.error.message }];
      setIssues(list);
      focusFirstInvalid();
      return setBanner({ tone: 'danger', text: list.some((i) => i.path) ? 'Not saved: fix the fields marked below.' : `Not saved: ${result.error.message}` });
    }
    setIssues([]);
    await store.getState().loadRoutine(result.value.id);
    location.hash = href.routine(result.value.id);
  };

  const remove = async () => {
    if (!confirmDelete) return setConfirmDelete(true);
    const r = await client.call('routines.remove', { id: form.id });
    if (!r.ok) return setBanner({ tone: 'danger', text: r.error.message });
    await store.getState().loadRoutines();
    location.hash = href.today();
  };

  const err = (f: FieldName) => errors[f];
  return (
    <div className="page">
      <PageHeader title={editing ? 'Edit routine' : 'New routine'} sub={editing ? <code>{form.id}</code> : 'Defined here, validated by the engine with the same schema as the CLI and schedule files.'}>
        <a className="btn btn-default btn-md" href={editing ? href.routine(form.id) : href.today()}>
          Cancel
        </a>
      </PageHeader>
      {banner && <Banner tone={banner.tone}>{banner.text}</Banner>}
      {errors.form && <Banner tone="danger">{errors.form}</Banner>}
      <form className="editor" onSubmit={(e) => void save(e)} noValidate aria-label={editing ? 'Edit routine' : 'New routine'}>
        <div className="editor-main">
          <Section title="Identity">
            <div className="form-row">
              <Field label="Id" error={err('id')} hint="user@COMPUTER:path/to/code — unique" className="grow">
                {(p) => <input {...p} value={form.id} readOnly={editing} onChange={(e) => set('id', e.target.value)} placeholder="me@laptop:reports/daily" autoComplete="off" spellCheck={false} />}
              </Field>
            </div>
            <div className="form-row">
              <Field label="Name" error={err('name')} hint="Group on Today; default: the path">
                {(p) => <input {...p} value={form.name} onChange={(e) => set('name', e.target.value)} autoComplete="off" />}
              </Field>
              <Field label="Schedule" error={err('schedule')} hint="Default: default">
                {(p) => <input {...p} value={form.schedule} onChange={(e) => set('schedule', e.target.value)} placeholder="default" autoComplete="off" />}
              </Field>
              <Field label="Computer" error={err('computer')} hint="Default: the one in the id">
                {(p) => <input {...p} value={form.computer} onChange={(e) => set('computer', e.target.value)} autoComplete="off" />}
              </Field>
            </div>
          </Section>

          <Section title="What runs">
            <fieldset className="radio-row" aria-describedby={err('kind') ? 'kind-err' : undefined}>
              <legend>Kind</legend>
              {(['batch', 'realtime'] as const).map((k) => (
                <label key={k} className="radio">
                  <input type="radio" name="kind" value={k} checked={form.kind === k} onChange={() => set('kind', k)} />
                  {k === 'batch' ? 'Batch — runs on a timing, then ends' : 'Realtime — kept running, restarted when it dies'}
                </label>
              ))}
              <label className="radio">
                <input type="checkbox" checked={form.external} onChange={(e) => set('external', e.target.checked)} />
                External (started by nobody, reports over the API)
              </label>
              {err('kind') && (
                <div className="field-error" id="kind-err" role="alert">
                  {err('kind')}
                </div>
              )}
            </fieldset>
            <div className="form-row">
              <Field label="Command" error={err('command')} className="grow">
                {(p) => <input {...p} value={form.command} onChange={(e) => set('command', e.target.value)} placeholder="/home/me/bin/fetch" autoComplete="off" spellCheck={false} />}
              </Field>
              <Field label="Working directory" error={err('cwd')}>
                {(p) => <input {...p} value={form.cwd} onChange={(e) => set('cwd', e.target.value)} placeholder="run directory" autoComplete="off" spellCheck={false} />}
              </Field>
            </div>
            <div className="form-row">
              <Field label="Arguments" error={err('args')} hint="One per line" className="grow">
                {(p) => <textarea {...p} rows={3} value={form.args} onChange={(e) => set('args', e.target.value)} spellCheck={false} />}
              </Field>
              <Field label="Environment" error={err('env')} hint="KEY=VALUE per line; secrets show as ***" className="grow">
                {(p) => <textarea {...p} rows={3} value={form.env} onChange={(e) => set('env', e.target.value)} spellCheck={false} />}
              </Field>
            </div>
          </Section>

          {form.kind === 'batch' && (
            <Section title="When">
              <fieldset className="segmented-field">
                <legend>Timing mode</legend>
                <div className="segmented" role="radiogroup" aria-label="Timing mode">
                  {TIMING_MODES.map((m) => (
                    <label key={m} className={form.mode === m ? 'is-on' : ''}>
                      <input type="radio" name="mode" value={m} checked={form.mode === m} onChange={() => set('mode', m)} />
                      {TIMING_HELP[m].label}
                    </label>
                  ))}
                </div>
              </fieldset>
              <div className="form-row">
                <Field label={TIMING_HELP[form.mode].label} error={timingError} hint={TIMING_HELP[form.mode].hint} className="grow">
                  {(p) => <input {...p} value={form.timing[form.mode]} onChange={(e) => set('timing', { ...form.timing, [form.mode]: e.target.value })} placeholder={TIMING_HELP[form.mode].placeholder} autoComplete="off" spellCheck={false} />}
                </Field>
                <Field label="Time zone" error={err('tz')}>
                  {(p) => (
                    <>
                      <input {...p} value={form.tz} onChange={(e) => set('tz', e.target.value)} list="zones" autoComplete="off" spellCheck={false} />
                      <datalist id="zones">
                        {ZONES.map((z) => (
                          <option key={z} value={z} />
                        ))}
                      </datalist>
                    </>
                  )}
                </Field>
              </div>
            </Section>
          )}

          <Section title="Dependencies">
            <Field label="Runs after" error={err('after')} hint="Ids of routines in the same schedule, comma separated">
              {(p) => (
                <>
                  <input {...p} value={form.after} onChange={(e) => set('after', e.target.value)} list="same-schedule" autoComplete="off" spellCheck={false} />
                  <datalist id="same-schedule">
                    {sameSchedule.slice(0, 500).map((r) => (
                      <option key={r} value={r} />
                    ))}
                  </datalist>
                </>
              )}
            </Field>
          </Section>

          <Section title="Policies">
            <div className="form-row">
              <Field label="Retry" error={err('retry')}>
                {(p) => (
                  <select {...p} value={form.retry} onChange={(e) => set('retry', e.target.value as EditorForm['retry'])}>
                    <option value="default">Default (none; one-shots every 60s for 1h)</option>
                    <option value="none">Never</option>
                    <option value="custom">Every … for …</option>
                  </select>
                )}
              </Field>
              {form.retry === 'custom' && (
                <>
                  <Field label="Retry every">{(p) => <input {...p} value={form.retryEvery} onChange={(e) => set('retryEvery', e.target.value)} placeholder="60s" />}</Field>
                  <Field label="For up to">{(p) => <input {...p} value={form.retryFor} onChange={(e) => set('retryFor', e.target.value)} placeholder="1h" />}</Field>
                </>
              )}
            </div>
            <div className="form-row">
              <Field label="Missed runs" error={err('misfire')} hint="After sleep or downtime">
                {(p) => (
                  <select {...p} value={form.misfire} onChange={(e) => set('misfire', e.target.value as EditorForm['misfire'])}>
                    <option value="">Run once (default)</option>
                    <option value="skip">Skip</option>
                    <option value="all">Run all</option>
                  </select>
                )}
              </Field>
              <Field label="Overlap" error={err('overlap')} hint="Previous run still going">
                {(p) => (
                  <select {...p} value={form.overlap} onChange={(e) => set('overlap', e.target.value as EditorForm['overlap'])}>
                    <option value="">Skip (default)</option>
                    <option value="queue-one">Queue one</option>
                    <option value="allow">Allow</option>
                  </select>
                )}
              </Field>
              <Field label="Timeout" error={err('timeout')} hint="e.g. 2h">
                {(p) => <input {...p} value={form.timeout} onChange={(e) => set('timeout', e.target.value)} placeholder="none" />}
              </Field>
            </div>
            <div className="form-row">
              {form.kind === 'realtime' ? (
                <>
                  <Field label="Heartbeat" error={err('heartbeat')} hint="Restart when silent longer">
                    {(p) => <input {...p} value={form.heartbeat} onChange={(e) => set('heartbeat', e.target.value)} placeholder="process only" />}
                  </Field>
                  <Field label="Startup grace" error={err('grace')} hint="At most 5m">
                    {(p) => <input {...p} value={form.grace} onChange={(e) => set('grace', e.target.value)} placeholder="45s" />}
                  </Field>
                </>
              ) : (
                <Field label="Late after" error={err('tolerance')} hint="DELAYED when not started by then">
                  {(p) => <input {...p} value={form.tolerance} onChange={(e) => set('tolerance', e.target.value)} placeholder="5m" />}
                </Field>
              )}
              <Field label="Log cap" error={err('logCap')} hint="Per stream">
                {(p) => <input {...p} value={form.logCap} onChange={(e) => set('logCap', e.target.value)} placeholder="64MiB" />}
              </Field>
              <Field label="Revision" error={err('revision')} hint="Git commit the code must be at">
                {(p) => <input {...p} value={form.revision} onChange={(e) => set('revision', e.target.value)} spellCheck={false} />}
              </Field>
            </div>
          </Section>
          <div className="form-foot sticky-foot">
            <Button type="submit" variant="primary" busy={saving}>
              {editing ? 'Save changes' : 'Create routine'}
            </Button>
            {editing && (
              <Button variant="danger" icon="trash" onClick={() => void remove()} onBlur={() => setConfirmDelete(false)}>
                {confirmDelete ? 'Click again to delete' : 'Delete routine'}
              </Button>
            )}
          </div>
        </div>
        <aside className="editor-side">
          <Section title="Next 5 runs">
            <Preview state={preview} kind={form.kind} />
          </Section>
        </aside>
      </form>
    </div>
  );
}

interface PreviewState {
  loading: boolean;
  runs: string[] | null;
  issues: Issue[];
}

/** Ask the engine for the next runs of the timing being typed (debounced). */
function usePreview(form: EditorForm): PreviewState {
  const { client } = useServices();
  const timing = timingOf(form);
  const key = JSON.stringify(timing);
  const [state, setState] = useState<PreviewState>({ loading: false, runs: null, issues: [] });
  useEffect(() => {
    if (!timing) return setState({ loading: false, runs: null, issues: [] });
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    const t = setTimeout(() => {
      void client.call('timing.preview', { timing, count: 5 }).then((r) => {
        if (!live) return;
        if (r.ok) setState({ loading: false, runs: r.value, issues: [] });
        else setState({ loading: false, runs: null, issues: r.error.issues?.length ? r.error.issues : [{ path: '', message: r.error.message }] });
      });
    }, 250);
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [client, key]);
  return state;
}

function Preview({ state, kind }: { state: PreviewState; kind: EditorForm['kind'] }): ReactElement {
  const now = useNow(10_000);
  if (kind === 'realtime') return <div className="muted small">Realtime routines start at once and are kept running.</div>;
  if (state.issues.length) return <div className="muted small">No preview: the timing is not valid yet.</div>;
  if (!state.runs) return <div className="muted small">{state.loading ? 'Computing…' : 'Type a timing to see when it runs.'}</div>;
  if (state.runs.length === 0) return <div className="muted small">Never runs.</div>;
  return (
    <ol className="next-runs" aria-label="Next runs preview" aria-busy={state.loading}>
      {state.runs.map((t) => (
        <li key={t}>
          <span className="tabular">{stamp(t)}</span> <span className="muted">{relative(t, now)}</span>
        </li>
      ))}
    </ol>
  );
}

/** After a refused save, take the reader to the first field that needs fixing. */
function focusFirstInvalid(): void {
  requestAnimationFrame(() => document.querySelector<HTMLElement>('.editor [aria-invalid="true"]')?.focus());
}

function mostCommon(values: string[]): string {
  const n = new Map<string, number>();
  let best = '';
  for (const v of values) {
    const c = (n.get(v) ?? 0) + 1;
    n.set(v, c);
    if (c > (n.get(best) ?? 0)) best = v;
  }
  return best;
}
