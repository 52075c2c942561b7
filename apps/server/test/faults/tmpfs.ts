import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A small tmpfs of the test's own, or the reason the machine does not allow one (not root, no mount permission). */
export function mountSmallTmpfs(sizeKiB: number): { dir: string; unmount(): void } | { skip: string } {
  if (process.getuid?.() !== 0) return { skip: 'mounting a tmpfs needs root' };
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-faults-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKiB}k`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return {
      skip: `mount -t tmpfs is not permitted here: ${String((err as { stderr?: unknown }).stderr ?? err).trim()}`,
    };
  }
  return {
    dir,
    unmount() {
      execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
