// The tray icon: colour, tooltip and menu from `trayModel`, refreshed when engine events arrive
// (throttled) and after every action; actions go to the engine through the current client.
import { Menu, nativeImage, Tray, type MenuItemConstructorOptions } from './electron.js';
import type { RoutineSummary } from '../engine/ops/views.js';
import { errorMessage } from '../engine/errors.js';
import type { AppAssets } from './assets.js';
import type { TendClient } from './client.js';
import { routineTarget } from './notify-policy.js';
import { pausePlan, resumePlan, schedulingPaused, type ScheduleMode } from './pause.js';
import { trayModel, type TrayAction, type TrayItem, type TrayModel } from './tray-model.js';

export interface TrayDeps {
  assets: AppAssets;
  client(): TendClient;
  mode(): 'engine' | 'attached';
  startAtLogin(): boolean;
  setStartAtLogin(on: boolean): void;
  /** Schedules the last pause took (remembered across restarts). */
  pausedSchedules(): string[];
  rememberPaused(names: string[]): void;
  open(target?: string): void;
  quit(): void;
  /** Something went wrong with a menu action: tell the person. */
  report(title: string, message: string): void;
}

const MIN_REFRESH_GAP_MS = 1500;

export class TrayController {
  private readonly tray: Tray;
  private model: TrayModel | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private lastRefresh = 0;
  private refreshing: Promise<void> | null = null;
  private destroyed = false;

  constructor(private readonly d: TrayDeps) {
    this.tray = new Tray(nativeImage.createFromPath(d.assets.trayIcon('green')));
    this.tray.setToolTip('Tend');
    this.tray.on('click', () => d.open());
  }

  get current(): TrayModel | null {
    return this.model;
  }

  /** Refresh soon: several events in a burst cost one refresh. */
  poke(): void {
    if (this.timer || this.destroyed) return;
    const wait = Math.max(0, this.lastRefresh + MIN_REFRESH_GAP_MS - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.refresh();
    }, wait);
  }

  refresh(): Promise<void> {
    this.refreshing ??= this.doRefresh().finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  destroy(): void {
    this.destroyed = true;
    if (this.timer) clearTimeout(this.timer);
    this.tray.destroy();
  }

  private async doRefresh(): Promise<void> {
    this.lastRefresh = Date.now();
    let routines: RoutineSummary[] = [];
    let schedules: ScheduleMode[] = [];
    let unreachable: string | null = null;
    try {
      [routines, schedules] = (await Promise.all([this.d.client().call('routines.list', {}), this.d.client().call('schedules.list', {})])) as [RoutineSummary[], ScheduleMode[]];
    } catch (err) {
      unreachable = `engine unreachable: ${errorMessage(err)}`;
    }
    if (this.destroyed) return;
    const model = trayModel(routines, schedulingPaused(schedules), { startAtLogin: this.d.startAtLogin(), mode: this.d.mode(), unreachable });
    if (model.colour !== this.model?.colour) this.tray.setImage(nativeImage.createFromPath(this.d.assets.trayIcon(model.colour)));
    this.tray.setToolTip(model.tooltip);
    this.tray.setContextMenu(Menu.buildFromTemplate(this.template(model.items)));
    this.model = model;
  }

  private template(items: TrayItem[]): MenuItemConstructorOptions[] {
    // '&' marks a mnemonic in menu labels: a routine called "a&b" must show as written.
    const label = (s: string) => s.replace(/&/g, '&&');
    return items.map((it): MenuItemConstructorOptions => {
      switch (it.kind) {
        case 'separator':
          return { type: 'separator' };
        case 'label':
          return { label: label(it.label), enabled: false };
        case 'submenu':
          return { label: label(it.label), submenu: this.template(it.items) };
        case 'checkbox':
          return { label: label(it.label), type: 'checkbox', checked: it.checked, click: () => void this.act(it.action) };
        case 'action':
          return { label: label(it.label), enabled: it.enabled ?? true, click: () => void this.act(it.action) };
      }
    });
  }

  async act(a: TrayAction): Promise<void> {
    const client = this.d.client();
    try {
      switch (a.type) {
        case 'open':
          return this.d.open();
        case 'open-routine':
          return this.d.open(routineTarget(a.routineId));
        case 'quit':
          return this.d.quit();
        case 'restart':
          await client.call('routines.restart', { id: a.routineId });
          break;
        case 'pause': {
          const plan = pausePlan((await client.call('schedules.list', {})) as ScheduleMode[]);
          for (const c of plan.changes) await client.call('schedules.setMode', c);
          this.d.rememberPaused(plan.remember);
          break;
        }
        case 'resume': {
          const changes = resumePlan((await client.call('schedules.list', {})) as ScheduleMode[], this.d.pausedSchedules());
          for (const c of changes) await client.call('schedules.setMode', c);
          this.d.rememberPaused([]);
          break;
        }
        case 'toggle-login':
          this.d.setStartAtLogin(!this.d.startAtLogin());
          break;
      }
    } catch (err) {
      this.d.report(`Tend: ${a.type} failed`, errorMessage(err));
    }
    await this.refresh();
  }
}
