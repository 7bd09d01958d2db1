// The `npm start` check of Electron's Linux sandbox (scripts/linux-sandbox.mjs): a clear message
// with the fixes where Chromium would abort on chrome-sandbox, silence where it can start.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { probe, sandboxProblem } from '../../scripts/linux-sandbox.mjs';

const SANDBOX = '/src/node_modules/electron/dist/chrome-sandbox';
const base = { platform: 'linux', uid: 1000, args: [] as string[], sandboxPath: SANDBOX, usernsUsable: false, usernsRestricted: true, sandbox: { uid: 1000, mode: 0o100755 } };
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('sandboxProblem', () => {
  it('says why and what to do when neither user namespaces nor a setuid helper are there (Ubuntu 24.04 after npm ci)', () => {
    expect(sandboxProblem(base)).toBe(
      [
        `Electron's sandbox cannot start here: unprivileged user namespaces are restricted by AppArmor (kernel.apparmor_restrict_unprivileged_userns = 1, as on Ubuntu 24.04 and later), and its setuid helper ${SANDBOX} is not owned by root with mode 4755.`,
        '  Fix it once for this checkout (the helper is what the installed .deb sets up the same way):',
        `    sudo chown root:root ${SANDBOX} && sudo chmod 4755 ${SANDBOX}`,
        '  or run this development copy without the sandbox: npm start -- --no-sandbox',
      ].join('\n'),
    );
    expect(sandboxProblem({ ...base, usernsRestricted: false })).toMatch(/^Electron's sandbox cannot start here: unprivileged user namespaces are not available on this kernel/);
  });

  it('is content with user namespaces, a root-owned 4755 helper, --no-sandbox, or another OS', () => {
    expect(sandboxProblem({ ...base, usernsUsable: true, usernsRestricted: false })).toBeNull();
    expect(sandboxProblem({ ...base, sandbox: { uid: 0, mode: 0o104755 } })).toBeNull();
    expect(sandboxProblem({ ...base, sandbox: { uid: 0, mode: 0o100755 } })).not.toBeNull();
    expect(sandboxProblem({ ...base, args: ['--no-sandbox'] })).toBeNull();
    expect(sandboxProblem({ ...base, platform: 'darwin' })).toBeNull();
  });

  it('as root, says Electron will not start sandboxed and how to start it anyway', () => {
    expect(sandboxProblem({ ...base, uid: 0, usernsUsable: true })).toMatch(/^Electron does not start its sandbox as root[^]*npm start -- --no-sandbox$/);
    expect(sandboxProblem({ ...base, uid: 0, args: ['--no-sandbox'] })).toBeNull();
  });

  it("probe reads the helper's owner and mode from the file system", () => {
    const d = mkdtempSync(join(tmpdir(), 'tend-sandbox-'));
    dirs.push(d);
    const helper = join(d, 'chrome-sandbox');
    writeFileSync(helper, '', { mode: 0o755 });
    const facts = probe(helper);
    expect(facts.sandbox).toEqual({ uid: process.getuid!(), mode: expect.any(Number) });
    expect(facts.sandbox!.mode & 0o7777).toBe(0o755);
    expect(probe(join(d, 'missing')).sandbox).toBeNull();
  });
});
