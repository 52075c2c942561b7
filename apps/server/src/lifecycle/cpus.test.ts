import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cgroupCpuQuota, cpuWarning, RECOMMENDED_CPUS, usableCpus } from './cpus.js';

/** cgroup files in a directory of the test's, `undefined` for a file that is absent. */
function cgroup(files: { cpuMax?: string; cfsQuota?: string; cfsPeriod?: string }) {
  const dir = mkdtempSync(join(tmpdir(), 'cpus-'));
  const paths = { cpuMax: join(dir, 'cpu.max'), cfsQuota: join(dir, 'quota'), cfsPeriod: join(dir, 'period') };
  for (const name of ['cpuMax', 'cfsQuota', 'cfsPeriod'] as const) {
    const content = files[name];
    if (content !== undefined) writeFileSync(paths[name], `${content}\n`);
  }
  return paths;
}

describe('usable CPUs', () => {
  it('reads a cgroup v2 quota, and none from `max`', () => {
    expect(cgroupCpuQuota(cgroup({ cpuMax: '150000 100000' }))).toBe(1.5);
    expect(cgroupCpuQuota(cgroup({ cpuMax: 'max 100000' }))).toBeUndefined();
  });

  it('reads a cgroup v1 quota, and none from -1 or without the files', () => {
    expect(cgroupCpuQuota(cgroup({ cfsQuota: '50000', cfsPeriod: '100000' }))).toBe(0.5);
    expect(cgroupCpuQuota(cgroup({ cfsQuota: '-1', cfsPeriod: '100000' }))).toBeUndefined();
    expect(cgroupCpuQuota(cgroup({}))).toBeUndefined();
  });

  it('takes the smaller of the affinity and the quota', () => {
    expect(usableCpus(4, 1.5)).toBe(1.5);
    expect(usableCpus(1, 8)).toBe(1);
    expect(usableCpus(2, undefined)).toBe(2);
  });

  it('warns below the recommended CPUs only', () => {
    expect(cpuWarning(RECOMMENDED_CPUS)).toBeUndefined();
    expect(cpuWarning(8)).toBeUndefined();
    expect(cpuWarning(1)).toMatch(/^1 CPU usable: .* share it with the event loop.* give the replica 2 CPUs/);
    expect(cpuWarning(1.5)).toMatch(/^1.5 CPUs usable: .* share them with the event loop/);
  });
});
