// Is the Slurm backend usable: the controller answers (`scontrol ping`), some node can run jobs
// (`sinfo`), and the nodes can see Tend's runs dir. An unhealthy backend pauses its stage for the
// pass: nothing fails, waiting work stays queued.
//
// The runs dir must be on a filesystem the nodes see, because the wrapper on the node writes the
// streams and the exit-code sentinel there and Tend reads them here. When every node is this
// machine, that holds trivially. Otherwise the runs dir must be on a network filesystem (NFS,
// Lustre, GPFS, CephFS, BeeGFS, CIFS …, told by its statfs type), or declared shared by the user
// (TEND_SLURM_SHARED_FS=1: e.g. the same path mounted some way Tend cannot tell).
import { statfs as statfsCb } from 'node:fs';
import { promisify } from 'node:util';
import os from 'node:os';
import type { Health } from '../../main/engine/backend.js';
import { errorMessage } from '../../main/engine/errors.js';
import { describeFailure, type SlurmRunner } from './commands.js';

// fs's callbacks, not node:fs/promises: that module (with the readline modules it loads) would be
// resident in every daemon for these few calls.
const statfs = promisify(statfsCb);

export interface NodeView {
  name: string;
  addr: string;
  /** `idle`, `mixed`, `down*` … as sinfo prints it. */
  state: string;
  partition: string;
  partitionUp: boolean;
}

export function parseSinfoNodes(stdout: string): NodeView[] {
  const out: NodeView[] = [];
  for (const line of stdout.split('\n')) {
    const f = line.split('|');
    if (f.length < 5 || !f[0]) continue;
    out.push({ name: f[0].trim(), addr: f[1]!.trim(), state: f[2]!.trim().toLowerCase(), partition: f[3]!.trim().replace(/\*$/, ''), partitionUp: f[4]!.trim() === 'up' });
  }
  return out;
}

/** A node state in which it can take jobs now or soon (not down, drained, failing or unreachable). */
export function canRunJobs(state: string): boolean {
  if (/[*~#!%$@^]$/.test(state)) return false; // not responding, powered down, powering up/down, rebooting …
  const base = state.replace(/[+-]$/, '');
  return ['idle', 'mixed', 'allocated', 'completing', 'planned', 'reserved'].includes(base);
}

/** statfs magic numbers of filesystems other machines can mount. */
const NETWORK_FS: Record<number, string> = {
  0x6969: 'nfs',
  0xff534d42: 'cifs',
  0xfe534d42: 'smb2',
  0x517b: 'smb',
  0x0bd00bd0: 'lustre',
  0x47504653: 'gpfs',
  0x00c36400: 'ceph',
  0x19830326: 'beegfs',
  0x01021997: '9p',
  0x5346414f: 'afs',
  0x7461636f: 'ocfs2',
  0x65735546: 'fuse (sshfs, glusterfs …)',
  0x564c: 'ncp',
  0x013111a8: 'ibrix',
  0xaad7aaea: 'panfs',
};

const LOCAL_FS: Record<number, string> = {
  0xef53: 'ext4',
  0x58465342: 'xfs',
  0x9123683e: 'btrfs',
  0x01021994: 'tmpfs',
  0x794c7630: 'overlayfs',
  0x2fc12fc1: 'zfs',
  0xf2f52010: 'f2fs',
};

export function isThisMachine(nameOrAddr: string): boolean {
  const v = nameOrAddr.trim().toLowerCase();
  if (v === '' || v === 'localhost' || v.startsWith('127.') || v === '::1') return true;
  const host = os.hostname().toLowerCase();
  if (v === host || v === host.split('.')[0]) return true;
  for (const list of Object.values(os.networkInterfaces())) for (const a of list ?? []) if (a.address.toLowerCase() === v) return true;
  return false;
}

export interface VisibilityInput {
  runsDir: string;
  nodes: NodeView[];
  declaredShared: boolean;
}

/** Null when the nodes can see the runs dir, else why not (with what to do about it). */
export async function runsDirProblem(v: VisibilityInput): Promise<string | null> {
  const remote = [...new Set(v.nodes.filter((n) => !isThisMachine(n.addr) && !isThisMachine(n.name)).map((n) => n.name))];
  if (remote.length === 0 || v.declaredShared) return null;
  let type: number;
  try {
    type = (await statfs(v.runsDir)).type;
  } catch (err) {
    return `cannot tell which filesystem holds ${v.runsDir}: ${errorMessage(err)}`;
  }
  if (NETWORK_FS[type] !== undefined) return null;
  const fs = LOCAL_FS[type] ?? `0x${type.toString(16)}`;
  const shown = remote.slice(0, 5).join(', ') + (remote.length > 5 ? ` and ${remote.length - 5} more` : '');
  return (
    `the runs dir ${v.runsDir} is on a local ${fs} filesystem of this machine, and Slurm's node${remote.length > 1 ? 's' : ''} ${shown} ` +
    `cannot see it (the job wrapper writes its streams and exit code there): put Tend's data dir (TEND_DATA_DIR) on a filesystem ` +
    `the nodes mount (NFS, Lustre, GPFS, CephFS, BeeGFS …), or set TEND_SLURM_SHARED_FS=1 if it is shared in a way Tend cannot tell`
  );
}

export async function clusterName(runner: SlurmRunner): Promise<string> {
  const r = await runner.run('scontrol', ['show', 'config']);
  if (r.code !== 0) throw new Error(`cannot read the cluster name: ${describeFailure('scontrol', r)}`);
  const m = /^ClusterName\s*=\s*(\S+)/m.exec(r.stdout);
  return m ? m[1]! : '';
}

export interface HealthInput {
  runner: SlurmRunner;
  runsDir: string;
  declaredShared: boolean;
}

export async function slurmHealth(h: HealthInput): Promise<Health> {
  const ping = await h.runner.run('scontrol', ['ping']);
  if (ping.failure) return { ok: false, reason: ping.failure };
  if (!/\bis UP\b/.test(ping.stdout)) {
    const said = (ping.stdout.trim().split('\n')[0] ?? '') || describeFailure('scontrol', ping);
    return { ok: false, reason: `the Slurm controller does not answer (scontrol ping: ${said})` };
  }
  const info = await h.runner.run('sinfo', ['--noheader', '--Node', '--format=%N|%o|%T|%P|%a']);
  if (info.code !== 0) return { ok: false, reason: `sinfo failed: ${describeFailure('sinfo', info)}` };
  const nodes = parseSinfoNodes(info.stdout);
  const usable = nodes.filter((n) => n.partitionUp && canRunJobs(n.state));
  if (usable.length === 0) {
    const seen = nodes.map((n) => `${n.name} ${n.state}${n.partitionUp ? '' : ` (partition ${n.partition} down)`}`);
    return { ok: false, reason: `no Slurm node can run jobs${seen.length ? `: ${[...new Set(seen)].slice(0, 8).join(', ')}` : ' (sinfo lists none)'}` };
  }
  const problem = await runsDirProblem({ runsDir: h.runsDir, nodes: nodes.filter((n) => n.partitionUp), declaredShared: h.declaredShared });
  if (problem) return { ok: false, reason: problem };
  return { ok: true, reason: null };
}
