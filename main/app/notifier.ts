// Native notifications for routines entering ERROR or DELAYED: the policy decides what to show
// and when (grouping, rate limit); this shows it, and a click opens the routine (or Today).
import { Notification } from './electron.js';
import type { EventRow } from '../engine/store/events.js';
import { NotificationPolicy, type Notice, type NotifyPolicyOptions } from './notify-policy.js';

export class Notifier {
  private readonly policy: NotificationPolicy;
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** Shown notifications, referenced until closed: a collected one loses its click handler. */
  private readonly live = new Set<Notification>();

  constructor(
    private readonly open: (target: string) => void,
    private readonly icon: string,
    o: NotifyPolicyOptions = {},
    private readonly now: () => number = Date.now,
  ) {
    this.policy = new NotificationPolicy(o);
  }

  offer(e: EventRow): void {
    const due = this.policy.offer(e, this.now());
    if (due === null || this.timer) return;
    this.timer = setTimeout(() => this.flush(), Math.max(0, due - this.now()));
  }

  flush(): Notice[] {
    this.timer = null;
    const notices = this.policy.flush(this.now());
    for (const n of notices) this.show(n);
    // Timers run on the event loop's cached clock, which lags Date.now() on a busy loop, so one
    // can fire before the window is over by the wall clock. Left there, the window would stay open
    // and every later offer would wait on a timer that no longer exists: no notification again.
    const due = this.policy.dueAt;
    if (due !== null) this.timer = setTimeout(() => this.flush(), Math.max(1, due - this.now()));
    return notices;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private show(n: Notice): void {
    if (!Notification.isSupported()) return;
    const note = new Notification({ title: n.title, body: n.body, icon: this.icon, silent: false });
    this.live.add(note);
    note.on('click', () => this.open(n.target));
    note.on('close', () => this.live.delete(note));
    note.show();
    // Notifications that are never closed explicitly (the OS keeps them) are let go after a while.
    setTimeout(() => this.live.delete(note), 10 * 60_000).unref?.();
  }
}
