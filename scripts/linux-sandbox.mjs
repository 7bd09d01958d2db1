// Whether Electron's Chromium sandbox can start on this Linux machine, decided before `electron .`
// runs: when it cannot, Chromium aborts at once with a FATAL line about chrome-sandbox, before any
// of Tend's code could explain. It needs either unprivileged user namespaces (off on some
// kernels; restricted by AppArmor on Ubuntu 24.04 and later) or node_modules' chrome-sandbox
// helper owned by root with mode 4755 (npm installs it as the user, 0755). As root, Chromium
// refuses to start sandboxed at all.
import { readFileSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const readNumber = (file) => {
  try {
    return Number(readFileSync(file, 'utf8').trim());
  } catch {
    return null;
  }
};

/** What the decision needs to know about this machine. */
export function probe(sandboxPath) {
  let sandbox = null;
  try {
    const st = statSync(sandboxPath);
    sandbox = { uid: st.uid, mode: st.mode };
  } catch {
    // not installed: electron reports that itself
  }
  const restricted = readNumber('/proc/sys/kernel/apparmor_restrict_unprivileged_userns') === 1;
  const cloneOff = readNumber('/proc/sys/kernel/unprivileged_userns_clone') === 0 || readNumber('/proc/sys/user/max_user_namespaces') === 0;
  const unshare = spawnSync('unshare', ['--user', 'true'], { stdio: 'ignore', timeout: 5000 });
  return { usernsUsable: !restricted && !cloneOff && unshare.status === 0, usernsRestricted: restricted, sandbox };
}

/** Null when Electron can start as asked; otherwise what to tell the person, with the fixes. */
export function sandboxProblem({ platform, uid, args, usernsUsable, usernsRestricted, sandbox, sandboxPath }) {
  if (platform !== 'linux' || args.includes('--no-sandbox')) return null;
  if (uid === 0) {
    return [
      'Electron does not start its sandbox as root, and Tend does not run it unsandboxed unasked.',
      '  Start Tend as your own user, or, knowingly: npm start -- --no-sandbox',
    ].join('\n');
  }
  if (usernsUsable) return null;
  if (sandbox && sandbox.uid === 0 && (sandbox.mode & 0o4755) === 0o4755) return null;
  const why = usernsRestricted
    ? 'unprivileged user namespaces are restricted by AppArmor (kernel.apparmor_restrict_unprivileged_userns = 1, as on Ubuntu 24.04 and later)'
    : 'unprivileged user namespaces are not available on this kernel';
  return [
    `Electron's sandbox cannot start here: ${why}, and its setuid helper ${sandboxPath} is not owned by root with mode 4755.`,
    '  Fix it once for this checkout (the helper is what the installed .deb sets up the same way):',
    `    sudo chown root:root ${sandboxPath} && sudo chmod 4755 ${sandboxPath}`,
    '  or run this development copy without the sandbox: npm start -- --no-sandbox',
  ].join('\n');
}
