import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/**
 * CPUs a replica should have. The event loop runs on one; V8 marks and sweeps the heap and compiles code on threads of
 * its own. With one CPU those threads take their time from the event loop, and each major collection stalls it for
 * tens of milliseconds beyond the pause node reports (BENCHMARKS.md, Overload): the tail latency of everything in
 * flight then. A second CPU takes that work off the loop's (docs/production.md, CPUs).
 */
export const RECOMMENDED_CPUS = 2;

/**
 * Where a container's CPU quota is read: cgroup v2's cpu.max, else cgroup v1's CFS quota and period, at the root of the
 * cgroup mount, where a container sees its own cgroup. A process outside a container is judged by its affinity alone.
 */
export interface CgroupFiles {
  readonly cpuMax: string;
  readonly cfsQuota: string;
  readonly cfsPeriod: string;
}

const CGROUP: CgroupFiles = {
  cpuMax: '/sys/fs/cgroup/cpu.max',
  cfsQuota: '/sys/fs/cgroup/cpu/cpu.cfs_quota_us',
  cfsPeriod: '/sys/fs/cgroup/cpu/cpu.cfs_period_us',
};

const read = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
};

/** The CPU quota of the process's cgroup, in CPUs (1.5 for 150 ms a 100 ms period); undefined without one. */
export function cgroupCpuQuota(files: CgroupFiles = CGROUP): number | undefined {
  const max = read(files.cpuMax)?.split(/\s+/);
  if (max !== undefined) return quota(max[0], max[1]);
  return quota(read(files.cfsQuota), read(files.cfsPeriod));
}

function quota(limit: string | undefined, period: string | undefined): number | undefined {
  const [l, p] = [Number(limit), Number(period)];
  // cgroup v2 writes `max` and v1 -1 for no quota.
  return Number.isFinite(l) && l > 0 && Number.isFinite(p) && p > 0 ? l / p : undefined;
}

/** The CPUs the process may use: those its affinity allows, fewer if its cgroup's quota is smaller. */
export function usableCpus(affinity = availableParallelism(), cgroupQuota = cgroupCpuQuota()): number {
  return cgroupQuota === undefined ? affinity : Math.min(affinity, cgroupQuota);
}

/** What the server says at start with `cpus` usable CPUs: nothing with enough of them. */
export function cpuWarning(cpus: number): string | undefined {
  if (cpus >= RECOMMENDED_CPUS) return undefined;
  return (
    `${cpus} CPU${cpus === 1 ? '' : 's'} usable: V8's collector and compilers share ` +
    `${cpus <= 1 ? 'it' : 'them'} with the event loop, and each major collection stalls it; give the replica ` +
    `${RECOMMENDED_CPUS} CPUs for steady tail latency (docs/production.md)`
  );
}
