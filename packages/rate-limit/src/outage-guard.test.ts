import { describe, expect, it, vi } from 'vitest';
import { createOutageGuard } from './outage-guard.js';

describe('createOutageGuard', () => {
  it('bounds a hanging primary by timeoutMs and marks it down once', async () => {
    const onOutage = vi.fn();
    const guard = createOutageGuard({ timeoutMs: 20, onOutage });
    const result = await guard.run(() => new Promise<never>(() => undefined));
    expect(result.ok).toBe(false);
    expect(String((result as { error: unknown }).error)).toContain('timed out after 20 ms');
    expect(guard.down).toBe(true);
    expect(onOutage).toHaveBeenCalledTimes(1);
  });

  it('skips a down primary until the retry interval elapsed, then one call probes it and recovers', async () => {
    let now = 0;
    const onOutage = vi.fn();
    const onRecover = vi.fn();
    const guard = createOutageGuard({ retryIntervalMs: 100, now: () => now, onOutage, onRecover });
    const primary = vi.fn(() => Promise.reject(new Error('down')));
    expect((await guard.run(primary)).ok).toBe(false);
    now = 99;
    expect(await guard.run(primary)).toEqual({ ok: false, error: new Error('down') });
    expect(primary).toHaveBeenCalledTimes(1);
    now = 100;
    primary.mockImplementation(() => Promise.resolve('back' as never));
    expect(await guard.run(primary)).toEqual({ ok: true, value: 'back' });
    expect(guard.down).toBe(false);
    expect([onOutage.mock.calls.length, onRecover.mock.calls.length]).toEqual([1, 1]);
  });

  it('ignores hooks that throw', async () => {
    const guard = createOutageGuard({
      onOutage: () => {
        throw new Error('logger broke');
      },
    });
    expect((await guard.run(() => Promise.reject(new Error('down')))).ok).toBe(false);
  });
});
