// The browser UI with 5,000 routines, against a real daemon (pass every 1 s) serving the built
// renderer, in headless Chromium (Debian's, through playwright-core):
// (a) first render of Today: navigation start → first routine row in the DOM / in a frame, over
//     cold loads (a fresh browser context each: empty cache, no storage), with the page's own
//     navigation and resource timings, the `routines.list` request as the browser saw it, and the
//     same request timed from Node beside it (server time without the browser);
// (b) scrolling the virtualised list: scrollTop set from requestAnimationFrame for ~3 s while every
//     frame's interval is recorded in the page; a steady scroll and a fling through the whole list.
// The routines are addressed to a computer this daemon does not run, so nothing starts.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { stringify } from 'yaml';
import { killTracked, scratch, tendOk } from '../test/helpers/cli.js';
import { Daemon } from '../test/helpers/daemon.js';
import { median, percentile, round } from './stats.js';
const N = 5000;
const CHROMIUM = process.env.TEND_BENCH_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const LOADS = Number(process.env.TEND_BENCH_UI_LOADS ?? 5);
const SCROLL_MS = Number(process.env.TEND_BENCH_UI_SCROLL_MS ?? 3000);
const SCROLL_REPEATS = 3;
const LONG_FRAME_MS = 50;
const VIEWPORT = { width: 1280, height: 800 };

// Runs in the page before any of its scripts (no DOM types in this tsconfig, hence a string):
// notes when the first routine row enters the DOM, and the start of the frame that paints it.
const FIRST_ROW_PROBE = `(() => {
  const b = (window.__tendBench = { firstRowDom: null, firstRowFrame: null, firstRowNextFrame: null });
  const seen = () => {
    if (b.firstRowDom !== null || !document.querySelector('.routine-row')) return b.firstRowDom !== null;
    b.firstRowDom = performance.now();
    // performance.now(), not the callback's argument: that is the frame's begin time, which can
    // predate the insertion when the main thread was busy.
    requestAnimationFrame(() => {
      b.firstRowFrame = performance.now();
      requestAnimationFrame(() => (b.firstRowNextFrame = performance.now()));
    });
    return true;
  };
  const mo = new MutationObserver(() => { if (seen()) mo.disconnect(); });
  mo.observe(document, { childList: true, subtree: true });
})();`;

// What the page knows about its own load, once the first row has been painted.
const PAGE_TIMINGS = `(() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const res = performance.getEntriesByType('resource').map((e) => ({ name: new URL(e.name).pathname, start: e.startTime, requestStart: e.requestStart, responseStart: e.responseStart, end: e.responseEnd, bytes: e.encodedBodySize, decoded: e.decodedBodySize }));
  const paint = Object.fromEntries(performance.getEntriesByType('paint').map((e) => [e.name, e.startTime]));
  return {
    probe: window.__tendBench,
    nav: nav ? { responseEnd: nav.responseEnd, domInteractive: nav.domInteractive, domContentLoaded: nav.domContentLoadedEventEnd, load: nav.loadEventEnd, transferSize: nav.transferSize } : null,
    res,
    paint,
    rowsInDom: document.querySelectorAll('.routine-row').length,
    sub: document.querySelector('.page-sub')?.textContent ?? null,
  };
})()`;

// Scrolls the Today list for `ms`, scrollTop = f(time since start) so the distance does not depend
// on the frame rate; records every frame interval, and per frame whether the rows in the DOM cover
// the viewport (what is about to be painted: the scroll event of the previous step has been handled).
const scrollScript = (ms: number, mode: 'steady' | 'fling', pxPerMs: number) => `(async () => {
  const el = document.querySelector('[data-testid=today-scroller]');
  const max = el.scrollHeight - el.clientHeight;
  el.scrollTop = 0;
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const speed = ${JSON.stringify(mode)} === 'fling' ? max / ${ms} : ${pxPerMs};
  const loaf = [];
  const canLoaf = (PerformanceObserver.supportedEntryTypes || []).includes('long-animation-frame');
  const obs = canLoaf ? new PerformanceObserver((l) => { for (const e of l.getEntries()) loaf.push(e.duration); }) : null;
  obs?.observe({ type: 'long-animation-frame' });
  const covered = () => {
    const top = el.scrollTop, bottom = top + el.clientHeight;
    let lo = Infinity, hi = -Infinity;
    for (const r of el.querySelectorAll('.vrow')) {
      const m = /translateY\\((-?[\\d.]+)px\\)/.exec(r.style.transform);
      if (!m) continue;
      const y = Number(m[1]);
      lo = Math.min(lo, y);
      hi = Math.max(hi, y + r.offsetHeight);
    }
    return lo <= top + 0.5 && hi >= Math.min(bottom, el.scrollHeight) - 0.5;
  };
  return await new Promise((resolve) => {
    const deltas = [];
    let start = null, last = 0, blank = 0, rowsMax = 0;
    const step = (t) => {
      if (start === null) start = t;
      else deltas.push(t - last);
      last = t;
      if (!covered()) blank++;
      rowsMax = Math.max(rowsMax, el.querySelectorAll('.routine-row').length);
      const elapsed = t - start;
      if (elapsed >= ${ms}) {
        setTimeout(() => { obs?.disconnect(); resolve({ deltas, elapsed, blank, rowsMax, maxScroll: max, speedPxPerMs: speed, finalScrollTop: el.scrollTop, loaf: canLoaf ? loaf : null }); }, 100);
        return;
      }
      const pos = (speed * elapsed) % (2 * max);
      el.scrollTop = pos <= max ? pos : 2 * max - pos;
      requestAnimationFrame(step);
    };
    requestAnimationFrame(step);
  });
})()`;

interface ScrollRun {
  deltas: number[];
  elapsed: number;
  blank: number;
  rowsMax: number;
  maxScroll: number;
  speedPxPerMs: number;
  finalScrollTop: number;
  loaf: number[] | null;
}

interface PageTimings {
  probe: { firstRowDom: number | null; firstRowFrame: number | null; firstRowNextFrame: number | null };
  nav: { responseEnd: number; domInteractive: number; domContentLoaded: number; load: number; transferSize: number } | null;
  res: { name: string; start: number; requestStart: number; responseStart: number; end: number; bytes: number; decoded: number }[];
  paint: Record<string, number>;
  rowsInDom: number;
  sub: string | null;
}

const r1 = (x: number | null | undefined): number | null => (x === null || x === undefined || !Number.isFinite(x) ? null : round(x, 1));
const med = (xs: (number | null)[]): number | null => {
  const v = xs.filter((x): x is number => x !== null && Number.isFinite(x));
  return v.length ? round(median(v), 1) : null;
};

/** One cold load of Today in a fresh context; what the page and the browser saw. */
async function coldLoad(browser: Browser, url: string, token: string) {
  const ctx: BrowserContext = await browser.newContext({ viewport: VIEWPORT });
  try {
    await ctx.addInitScript({ content: FIRST_ROW_PROBE });
    const page: Page = await ctx.newPage();
    const api: Record<string, { status: number; ttfbMs: number; totalMs: number; encoding: string | null }> = {};
    const pending: Promise<void>[] = [];
    page.on('response', (res) => {
      const path = new URL(res.url()).pathname;
      if (path !== '/api/routines' && path !== '/api/schedules') return;
      pending.push(
        res.finished().then(() => {
          const t = res.request().timing(); // ms relative to t.startTime; -1 = not applicable
          api[path] = { status: res.status(), ttfbMs: round(t.responseStart - t.requestStart, 1), totalMs: round(t.responseEnd, 1), encoding: res.headers()['content-encoding'] ?? null };
        }),
      );
    });
    const t0 = performance.now();
    await page.goto(`${url}/#token=${token}`, { waitUntil: 'commit' });
    await page.waitForSelector('.routine-row', { state: 'visible', timeout: 60_000 });
    const waitForSelectorMs = performance.now() - t0;
    await page.waitForFunction('window.__tendBench && window.__tendBench.firstRowNextFrame !== null', undefined, { timeout: 10_000 });
    await Promise.all(pending);
    const p = (await page.evaluate(PAGE_TIMINGS)) as PageTimings;
    const routinesRes = p.res.find((e) => e.name === '/api/routines');
    const js = p.res.filter((e) => e.name.endsWith('.js'));
    return {
      firstRowFrameMs: r1(p.probe.firstRowFrame),
      firstRowDomMs: r1(p.probe.firstRowDom),
      firstRowNextFrameMs: r1(p.probe.firstRowNextFrame),
      waitForSelectorMs: r1(waitForSelectorMs),
      nav: p.nav && { responseEnd: r1(p.nav.responseEnd), domInteractive: r1(p.nav.domInteractive), domContentLoaded: r1(p.nav.domContentLoaded), load: r1(p.nav.load) },
      firstContentfulPaintMs: r1(p.paint['first-contentful-paint']),
      scriptsEndMs: js.length ? r1(Math.max(...js.map((e) => e.end))) : null,
      scriptBytes: js.reduce((a, e) => a + e.bytes, 0),
      // The list request as the page timed it (ms since navigation start).
      routinesRequest: routinesRes ? { startMs: r1(routinesRes.start), ttfbMs: r1(routinesRes.responseStart - routinesRes.requestStart), endMs: r1(routinesRes.end), bytes: routinesRes.bytes, decodedBytes: routinesRes.decoded } : null,
      // …and as Playwright saw it (page.on('response')).
      network: api,
      afterResponseMs: routinesRes && p.probe.firstRowFrame !== null ? r1(p.probe.firstRowFrame - routinesRes.end) : null,
      rowsInDom: p.rowsInDom,
      sub: p.sub,
    };
  } finally {
    await ctx.close();
  }
}

function frameStats(runs: ScrollRun[]) {
  const deltas = runs.flatMap((r) => r.deltas);
  const frames = deltas.length;
  const seconds = runs.reduce((a, r) => a + r.elapsed, 0) / 1000;
  return {
    runs: runs.length,
    secondsEach: round(median(runs.map((r) => r.elapsed)) / 1000, 2),
    speedPxPerS: round(runs[0]!.speedPxPerMs * 1000, 0),
    listHeightPx: runs[0]!.maxScroll,
    frames,
    fpsMedian: frames ? round(1000 / median(deltas), 1) : null,
    fpsMean: seconds ? round(frames / seconds, 1) : null,
    frameMs: frames ? { median: round(median(deltas), 1), p95: round(percentile(deltas, 95), 1), p99: round(percentile(deltas, 99), 1), max: round(Math.max(...deltas), 1) } : null,
    longFrames: deltas.filter((d) => d > LONG_FRAME_MS).length,
    longFramesPerRun: runs.map((r) => r.deltas.filter((d) => d > LONG_FRAME_MS).length),
    // Frames over 1.5 vsync intervals at the measured median: at least one missed frame.
    missedVsync: frames ? deltas.filter((d) => d > 1.5 * median(deltas)).length : null,
    // Chromium's own long-animation-frame entries (> 50 ms of main-thread work in one frame).
    longAnimationFrames: runs.every((r) => r.loaf) ? runs.reduce((a, r) => a + r.loaf!.length, 0) : null,
    blankFrames: runs.reduce((a, r) => a + r.blank, 0),
    routineRowsInDomMax: Math.max(...runs.map((r) => r.rowsMax)),
  };
}

export async function benchUi() {
  const box = scratch('tend-bench-ui-');
  const root = box.dir;
  const dir = join(root, 'data');
  mkdirSync(dir);
  let daemon: Daemon | null = null;
  let browser: Browser | null = null;
  try {
    const routines = Array.from({ length: N }, (_, i) => ({ id: `bench@farm:ui/r${String(i).padStart(4, '0')}`, command: '/bin/true', cron: `${i % 60} ${i % 24} * * *`, tz: 'UTC' }));
    const file = join(root, 'ui.yaml');
    writeFileSync(file, stringify({ schedule: 'bench-ui', routines }));
    const ti = performance.now();
    tendOk(dir, ['schedule', 'import', file]);
    const importMs = performance.now() - ti;

    daemon = await new Daemon(dir, { TEND_DAEMON_INTERVAL_MS: '1000', TEND_API_PORT: '0' }).ready(60_000);
    const { url, token } = await daemon.serving(60_000);
    await delay(2000); // settle after start

    // The list request from Node: server time plus localhost HTTP, no browser.
    const auth = { authorization: `Bearer ${token}` };
    const serverMs: number[] = [];
    const parseMs: number[] = [];
    let listBytes = 0;
    let listCount = 0;
    for (let i = 0; i < 10; i++) {
      const t = performance.now();
      const res = await fetch(`${url}/api/routines`, { headers: auth });
      const text = await res.text();
      serverMs.push(performance.now() - t);
      const tp = performance.now();
      const body = JSON.parse(text) as { ok: boolean; value: unknown[] };
      parseMs.push(performance.now() - tp);
      listBytes = Buffer.byteLength(text);
      listCount = body.ok ? body.value.length : -1;
    }
    if (listCount !== N) throw new Error(`routines.list returned ${listCount} routines, expected ${N}`);

    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    const warmup = await coldLoad(browser, url, token); // browser process start-up, first compile: not counted
    const loads: Awaited<ReturnType<typeof coldLoad>>[] = [];
    for (let i = 0; i < LOADS; i++) loads.push(await coldLoad(browser, url, token));

    // Scrolling: one page, loaded and settled, then steady and fling runs interleaved.
    const ctx = await browser.newContext({ viewport: VIEWPORT });
    let scroll;
    try {
      const page = await ctx.newPage();
      await page.goto(`${url}/#token=${token}`);
      await page.waitForSelector('.routine-row', { state: 'visible', timeout: 60_000 });
      await new Promise((r) => setTimeout(r, 1000));
      const steady: ScrollRun[] = [];
      const fling: ScrollRun[] = [];
      for (let i = 0; i < SCROLL_REPEATS; i++) {
        steady.push((await page.evaluate(scrollScript(SCROLL_MS, 'steady', 3))) as ScrollRun);
        fling.push((await page.evaluate(scrollScript(SCROLL_MS, 'fling', 0))) as ScrollRun);
      }
      const lastVisible = await page.evaluate("document.querySelector('[data-testid=today-scroller]').scrollTop = 1e9, new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(!!document.querySelector('.routine-row[data-routine=\"bench@farm:ui/r4999\"]')))))");
      scroll = { steady: frameStats(steady), fling: frameStats(fling), lastRowReachable: lastVisible };
    } finally {
      await ctx.close();
    }

    const firstRow = loads.map((l) => l.firstRowFrameMs);
    return {
      name: 'ui',
      description: `Today in headless Chromium with ${N} routines, real daemon (pass 1 s): first render over ${LOADS} cold loads (fresh context each; navigation start → first routine row in the DOM and the frame that paints it), and requestAnimationFrame frame intervals while scrolling the virtualised list for ${SCROLL_MS / 1000} s (steady 3000 px/s, and a fling through the whole list), ${SCROLL_REPEATS} runs each`,
      routines: N,
      chromium: browser.version(),
      loadAverage: os.loadavg().map((x) => round(x, 2)),
      importMs: round(importMs, 0),
      firstRender: {
        // The primary number: start of the frame that paints the first row, ms since navigation start.
        medianMs: med(firstRow),
        samplesMs: firstRow,
        firstRowInDomMs: med(loads.map((l) => l.firstRowDomMs)),
        nextFrameMs: med(loads.map((l) => l.firstRowNextFrameMs)),
        waitForSelectorMs: med(loads.map((l) => l.waitForSelectorMs)),
        warmupLoadMs: warmup.firstRowFrameMs,
        rowsInDom: loads[0]?.rowsInDom ?? null,
        header: loads[0]?.sub ?? null,
      },
      // Medians over the loads, ms since navigation start unless named otherwise.
      breakdown: {
        documentResponseEnd: med(loads.map((l) => l.nav?.responseEnd ?? null)),
        domContentLoaded: med(loads.map((l) => l.nav?.domContentLoaded ?? null)),
        loadEvent: med(loads.map((l) => l.nav?.load ?? null)),
        scriptsEnd: med(loads.map((l) => l.scriptsEndMs)),
        scriptBytes: loads[0]?.scriptBytes ?? null,
        firstContentfulPaint: med(loads.map((l) => l.firstContentfulPaintMs)),
        routinesRequestStart: med(loads.map((l) => l.routinesRequest?.startMs ?? null)),
        routinesRequestTtfbDurationMs: med(loads.map((l) => l.routinesRequest?.ttfbMs ?? null)),
        routinesRequestEnd: med(loads.map((l) => l.routinesRequest?.endMs ?? null)),
        routinesResponseBytes: loads[0]?.routinesRequest?.bytes ?? null,
        routinesNetworkTotalMs: med(loads.map((l) => l.network['/api/routines']?.totalMs ?? null)),
        schedulesNetworkTotalMs: med(loads.map((l) => l.network['/api/schedules']?.totalMs ?? null)),
        contentEncoding: loads[0]?.network['/api/routines']?.encoding ?? null,
        // From the list response's last byte to the frame painting the first row: JSON parse,
        // todayView over 5,000 routines, React render and layout.
        responseToFirstRowFrameMs: med(loads.map((l) => l.afterResponseMs)),
      },
      server: {
        // GET /api/routines from Node over localhost, 10 times, with the daemon passing every second.
        routinesListMs: { median: round(median(serverMs), 1), min: round(Math.min(...serverMs), 1), max: round(Math.max(...serverMs), 1) },
        jsonBytes: listBytes,
        nodeJsonParseMs: round(median(parseMs), 1),
      },
      scroll,
      loads,
      targets: { firstRenderMs: 500, longFramesWhileScrolling: 0 },
    };
  } finally {
    if (browser) await browser.close().catch(() => undefined);
    await daemon?.stop(5000).catch(() => undefined);
    await killTracked();
    box.remove();
  }
}
