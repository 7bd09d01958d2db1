#!/usr/bin/env node
// The layering rule, run by `npm run lint` (README, "Architecture"): which folder may import which.
// oxlint's no-restricted-imports matches import text, not the file it names, so relative imports
// ('../../api/x.js') slip through it; this resolves each import to its file and checks that.
//
// Usage: node scripts/check-layers.mjs [--root DIR]   (exit 1 naming every violation)
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The contract: what the engine implements and every client (renderer, app, worker) imports. */
const CONTRACT = ['contract/'];
/** The backend port: what a backend implements, and the few leaf helpers it shares with the engine. */
const PORT = ['main/engine/backend.ts', 'main/engine/errors.ts', 'main/engine/domain/slurm.ts', 'main/engine/node-runtime.ts'];
/** The engine's core: state, timing, lifecycles, the pass, operations, the event catalogue and log. It knows no adapter. */
const CORE = ['main/engine/store/', 'main/engine/timing/', 'main/engine/lifecycle/', 'main/engine/scheduler/', 'main/engine/ops/', 'main/engine/graph/', 'main/engine/domain/', 'main/engine/events/'];
const ADAPTERS = ['main/engine/api/', 'main/engine/mcp/', 'main/engine/metrics/', 'main/engine/webhooks/', 'main/engine/pool/', 'main/engine/daemon/', 'main/engine/host/'];
/** What wires backends into an engine: the host (and the daemon it runs). */
const HOST = ['main/engine/host/', 'main/engine/daemon/'];

const under = (file, prefixes) => prefixes.some((p) => (p.endsWith('/') ? file.startsWith(p) : file === p));

/** Each rule: files it applies to, and a test of an imported repo file (and whether the import is of types only); a string is the reason it is refused. */
export const RULES = [
  {
    name: 'core imports no adapter',
    applies: (f) => under(f, CORE),
    refuses: (t) => (under(t, ADAPTERS) || under(t, ['worker/', 'main/app/', 'main/cli/', 'renderer/', 'preload/']) ? 'the core (store, timing, lifecycle, scheduler, ops, graph, domain, events) imports no adapter, host or client' : null),
  },
  {
    name: 'only the host wires backends',
    applies: (f) => f.startsWith('main/engine/') && !under(f, HOST),
    refuses: (t) => (t.startsWith('worker/') ? 'the engine reaches backends through the port (main/engine/backend.ts); only the host injects them' : under(t, ['main/app/', 'main/cli/', 'renderer/']) ? 'the engine imports no app, CLI or renderer' : null),
  },
  {
    // Types of the engine it names (what the engine implements); code it runs, never: the API
    // client in it is bundled into the browser page.
    name: 'the contract runs no engine code',
    applies: (f) => f.startsWith('contract/'),
    refuses: (t, typeOnly) => (!typeOnly && !t.startsWith('contract/') ? 'the contract imports at run time nothing outside contract/ (types of the engine it may)' : null),
  },
  {
    name: 'the renderer imports only the contract',
    applies: (f) => f.startsWith('renderer/'),
    refuses: (t) => (t.startsWith('renderer/') || under(t, CONTRACT) ? null : 'the renderer imports nothing outside renderer/ but the contract'),
  },
  {
    name: 'backends import only the port and the contract',
    applies: (f) => f.startsWith('worker/') && !f.startsWith('worker/remote/'),
    refuses: (t) => (t.startsWith('main/') && !under(t, [...PORT, ...CONTRACT]) ? 'a backend imports from the engine only the backend port and the contract' : null),
  },
  {
    // The remote worker is a program of its own: it keeps its own ledger (the engine's store code
    // over its own file) and prunes its own job directories by the same day rules.
    name: 'the remote worker imports the port, the contract and its ledger',
    applies: (f) => f.startsWith('worker/remote/'),
    refuses: (t) => (t.startsWith('main/') && !under(t, [...PORT, ...CONTRACT, 'main/engine/store/store.ts', 'main/engine/ids.ts', 'main/engine/keep-days.ts']) ? 'the remote worker imports from the engine only the port, the contract and its ledger' : null),
  },
];

const SOURCES = ['main', 'worker', 'preload', 'renderer/src', 'contract'];
const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

function* walk(root, dir) {
  const abs = join(root, dir);
  if (!existsSync(abs)) return;
  for (const e of readdirSync(abs, { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== 'dist') yield* walk(root, rel);
    } else if (/\.(c|m)?tsx?$/.test(e.name) && !e.name.endsWith('.d.ts')) yield rel;
  }
}

/** The repo file a relative specifier names ('./x.js' may be x.ts or x.tsx), or null. */
function resolveImport(root, from, spec) {
  if (!spec.startsWith('.')) return null;
  const base = normalize(join(dirname(from), spec)).split(sep).join('/');
  const stem = base.replace(/\.(c|m)?js$/, '');
  for (const c of [base, `${stem}.ts`, `${stem}.tsx`, `${stem}.cts`, `${stem}.mts`, `${base}/index.ts`]) if (existsSync(join(root, c))) return c;
  return base;
}

export function checkLayers(root) {
  const violations = [];
  for (const dir of SOURCES) {
    for (const file of walk(root, dir)) {
      const text = readFileSync(join(root, file), 'utf8');
      const rules = RULES.filter((r) => r.applies(file));
      if (rules.length === 0) continue;
      for (const m of text.matchAll(IMPORT)) {
        const spec = m[1] ?? m[2] ?? m[3];
        const target = resolveImport(root, file, spec);
        if (!target) continue;
        const line = text.slice(0, m.index + m[0].lastIndexOf(spec)).split('\n').length;
        const typeOnly = /^[\s;]*(import|export)\s+type\b/.test(m[0]);
        for (const r of rules) {
          const why = r.refuses(target, typeOnly);
          if (why) violations.push({ file, line, target, rule: r.name, why });
        }
      }
    }
  }
  return violations;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const at = process.argv.indexOf('--root');
  const root = at > 0 ? process.argv[at + 1] : join(dirname(fileURLToPath(import.meta.url)), '..');
  const found = checkLayers(root);
  for (const v of found) process.stderr.write(`${v.file}:${v.line}: imports ${v.target}: ${v.why} (rule: ${v.rule})\n`);
  if (found.length) {
    process.stderr.write(`layers: ${found.length} import${found.length === 1 ? '' : 's'} across a layer boundary (scripts/check-layers.mjs)\n`);
    process.exit(1);
  }
  process.stdout.write(`layers: ${relative(process.cwd(), root) || '.'} keeps its layers\n`);
}
