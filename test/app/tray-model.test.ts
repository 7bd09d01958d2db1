import { describe, expect, it } from 'vitest';
import type { RoutineSummary } from '../../main/engine/ops/views.js';
import { shortId, trayModel, type TrayItem } from '../../main/app/tray-model.js';

function routine(path: string, today: RoutineSummary['today'], extra: Partial<RoutineSummary> = {}): RoutineSummary {
  return {
    id: `me@host:${path}`,
    name: path.split('/')[0]!,
    schedule: 'default',
    computer: 'me@host',
    kind: 'batch',
    external: false,
    observeOnly: false,
    trigger: 'scheduled',
    nextRun: null,
    retry: null,
    today,
    lastRun: null,
    dependencies: [],
    ...extra,
  };
}

const labels = (items: TrayItem[]) => items.map((i) => (i.kind === 'separator' ? '---' : i.label));
const find = (items: TrayItem[], label: string) => items.find((i) => i.kind !== 'separator' && i.label === label);

describe('trayModel', () => {
  it('is green with "all fine" when nothing failed or is late', () => {
    const m = trayModel([routine('a/x', 'COMPLETED'), routine('b/y', null), routine('c/z', 'RUNNING', { kind: 'realtime' })], false, { startAtLogin: false });
    expect(m.colour).toBe('green');
    expect(m.health).toBe('ok');
    expect(m.tooltip).toBe('Tend — 3 routines: 1 running');
    expect(labels(m.items)).toEqual(['Open Tend', '---', 'Pause scheduling (observe-only)', 'Start at login', '---', 'Quit Tend']);
  });

  it('is amber when something is DELAYED and nothing is in ERROR', () => {
    const m = trayModel([routine('a/x', 'DELAYED'), routine('b/y', 'COMPLETED')], false, { startAtLogin: false });
    expect(m.colour).toBe('amber');
    expect(m.tooltip).toBe('Tend — 2 routines: 1 delayed');
  });

  it('is red when something is in ERROR, even with delays, and counts each', () => {
    const m = trayModel([routine('a/x', 'DELAYED'), routine('b/y', 'ERROR'), routine('c/z', 'ERROR', { kind: 'realtime' }), routine('d/w', 'STARTING')], false, { startAtLogin: true });
    expect(m.colour).toBe('red');
    expect(m.counts).toEqual({ routines: 4, failed: 2, delayed: 1, running: 1 });
    expect(m.tooltip).toBe('Tend — 4 routines: 2 failed, 1 delayed, 1 running');
  });

  it("lists today's failures, each with Restart and Open", () => {
    const m = trayModel([routine('z/last', 'ERROR'), routine('a/first', 'ERROR'), routine('ok/one', 'COMPLETED')], false, { startAtLogin: false });
    expect(labels(m.items)).toEqual(['Open Tend', '---', 'Failed today (2)', 'a/first', 'z/last', '---', 'Pause scheduling (observe-only)', 'Start at login', '---', 'Quit Tend']);
    const first = find(m.items, 'a/first');
    expect(first).toEqual({
      kind: 'submenu',
      label: 'a/first',
      items: [
        { kind: 'action', label: 'Restart', action: { type: 'restart', routineId: 'me@host:a/first' } },
        { kind: 'action', label: 'Open', action: { type: 'open-routine', routineId: 'me@host:a/first' } },
      ],
    });
  });

  it('lists at most maxListed failures and sums up the rest', () => {
    const many = Array.from({ length: 13 }, (_, i) => routine(`r/${String(i).padStart(2, '0')}`, 'ERROR'));
    const m = trayModel(many, false, { startAtLogin: false, maxListed: 10 });
    expect(m.items.filter((i) => i.kind === 'submenu')).toHaveLength(10);
    expect(find(m.items, '…and 3 more')).toEqual({ kind: 'action', label: '…and 3 more', action: { type: 'open' } });
  });

  it('offers Resume while paused and says so in the tooltip', () => {
    const m = trayModel([routine('a/x', 'COMPLETED')], true, { startAtLogin: false });
    expect(find(m.items, 'Resume scheduling')).toEqual({ kind: 'action', label: 'Resume scheduling', action: { type: 'resume' }, enabled: true });
    expect(find(m.items, 'Pause scheduling (observe-only)')).toBeUndefined();
    expect(m.tooltip).toBe('Tend — 1 routine: all fine · scheduling paused (observe-only)');
  });

  it('shows Start at login as a checkbox with its state', () => {
    expect(find(trayModel([], false, { startAtLogin: true }).items, 'Start at login')).toEqual({ kind: 'checkbox', label: 'Start at login', checked: true, action: { type: 'toggle-login' } });
    expect(find(trayModel([], false, { startAtLogin: false }).items, 'Start at login')).toMatchObject({ checked: false });
  });

  it('cannot pause with no routines, and says it is attached to a daemon', () => {
    const m = trayModel([], false, { startAtLogin: false, mode: 'attached' });
    expect(find(m.items, 'Pause scheduling (observe-only)')).toMatchObject({ enabled: false });
    expect(m.tooltip).toBe('Tend — 0 routines · attached to the daemon');
  });

  it('is red with the reason when the engine cannot be reached', () => {
    const m = trayModel([], false, { startAtLogin: false, mode: 'attached', unreachable: 'engine unreachable: connection refused' });
    expect(m.colour).toBe('red');
    expect(m.tooltip).toBe('Tend — engine unreachable: connection refused · attached to the daemon');
  });

  it('counts observe-only routines too: their status is still tracked', () => {
    expect(trayModel([routine('a/x', 'ERROR', { observeOnly: true })], false, { startAtLogin: false }).colour).toBe('red');
  });

  it('shows routine ids without user@host', () => {
    expect(shortId('me@host:reports/download')).toBe('reports/download');
    expect(shortId('plain')).toBe('plain');
  });
});
