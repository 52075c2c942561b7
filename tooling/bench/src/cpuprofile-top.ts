/**
 * Aggregates a V8 .cpuprofile (node --cpu-prof) by function: self time and share, top N.
 *
 *   node dist/cpuprofile-top.js <file.cpuprofile> [N]
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface TopEntry {
  name: string;
  where: string;
  selfMs: number;
  share: number;
}

/** Short location: the package (node_modules/<pkg>) or the path under the repository, with the line. */
function where(frame: CallFrame): string {
  if (!frame.url) return '';
  const url = frame.url.replace(/^file:\/\//, '');
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    const pkg = rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
    return `${pkg}:${basename(url)}:${frame.lineNumber + 1}`;
  }
  const apps = url.indexOf('/apps/');
  const pkgs = url.indexOf('/packages/');
  const cut = apps >= 0 ? apps + 1 : pkgs >= 0 ? pkgs + 1 : -1;
  return `${cut >= 0 ? url.slice(cut) : url}:${frame.lineNumber + 1}`;
}

export function topFunctions(file: string, n = 25): { entries: TopEntry[]; totalMs: number; idleMs: number } {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const agg = new Map<string, TopEntry>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of self) {
    const frame = byId.get(id)!.callFrame;
    const name = frame.functionName || '(anonymous)';
    if (name === '(idle)') {
      idle += us;
      continue;
    }
    total += us;
    const key = `${name}@${where(frame)}`;
    const e = agg.get(key) ?? { name, where: where(frame), selfMs: 0, share: 0 };
    e.selfMs += us / 1000;
    agg.set(key, e);
  }
  const entries = [...agg.values()].sort((a, b) => b.selfMs - a.selfMs).slice(0, n);
  for (const e of entries) e.share = e.selfMs / (total / 1000);
  return { entries, totalMs: total / 1000, idleMs: idle / 1000 };
}

/** Self time grouped by package (node_modules/<pkg>, our apps/packages, node internals). */
export function byPackage(file: string): Array<{ pkg: string; selfMs: number; share: number }> {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const sums = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const frame = byId.get(profile.samples[i]!)!.callFrame;
    if (frame.functionName === '(idle)') continue;
    const us = profile.timeDeltas[i] ?? 0;
    total += us;
    const url = frame.url.replace(/^file:\/\//, '');
    let pkg: string;
    const nm = url.lastIndexOf('node_modules/');
    if (nm >= 0) {
      const rest = url.slice(nm + 'node_modules/'.length).split('/');
      pkg = rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? '?');
    } else if (url.includes('/apps/server/')) pkg = 'apps/server (ours)';
    else if (url.includes('/packages/')) pkg = `packages/${url.split('/packages/')[1]?.split('/')[0] ?? '?'} (ours)`;
    else if (url.startsWith('node:')) pkg = 'node internals (js)';
    else pkg = frame.functionName.startsWith('(') ? frame.functionName : '(native / V8)';
    sums.set(pkg, (sums.get(pkg) ?? 0) + us);
  }
  return [...sums.entries()]
    .map(([pkg, us]) => ({ pkg, selfMs: us / 1000, share: us / total }))
    .sort((a, b) => b.selfMs - a.selfMs);
}

export function printTop(file: string, n = 25): void {
  const { entries, totalMs, idleMs } = topFunctions(file, n);
  console.log(`${file}: busy ${totalMs.toFixed(0)} ms, idle ${idleMs.toFixed(0)} ms`);
  console.log('  self ms   share  function  (where)');
  for (const e of entries)
    console.log(
      `${e.selfMs.toFixed(1).padStart(8)} ${(e.share * 100).toFixed(1).padStart(6)}%  ${e.name}  (${e.where})`,
    );
  console.log('\n  by package:');
  for (const p of byPackage(file).slice(0, 15))
    console.log(`${p.selfMs.toFixed(1).padStart(8)} ${(p.share * 100).toFixed(1).padStart(6)}%  ${p.pkg}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node dist/cpuprofile-top.js <file.cpuprofile> [N]');
    process.exit(2);
  }
  printTop(file, Number(process.argv[3] ?? 25));
}
