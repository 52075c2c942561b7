/** Options of {@link createOutageGuard}. */
export interface OutageGuardOptions {
  /** Called once when an outage starts (the first failure after a success). */
  readonly onOutage?: (err: unknown) => void;
  /** Called once when the primary answers again after an outage. */
  readonly onRecover?: () => void;
  /** Upper bound (ms) on a primary call, on top of the client's own command timeout (default 500). */
  readonly timeoutMs?: number;
  /** While down, at most one call per this interval (default 500 ms) tries the primary; the others skip it. */
  readonly retryIntervalMs?: number;
  /** Clock for the retry interval (default `Date.now`). */
  readonly now?: () => number;
}

/** The primary's answer, or why the caller must do without it. */
export type GuardedResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

/** Tracks a primary store's outages, so that during one a call costs nothing but the fallback. */
export interface OutageGuard {
  /** True while the primary is considered down. */
  readonly down: boolean;
  /** Calls the primary unless it is down and not due for a probe; never rejects. */
  run<T>(call: () => Promise<T>): Promise<GuardedResult<T>>;
  /** `promise`, rejected when slower than `timeoutMs`; the guard's state is left as it is. */
  bounded<T>(promise: Promise<T>): Promise<T>;
}

/**
 * The outage rule the resilient stores share: a failure (or a call slower than `timeoutMs`) marks the primary down;
 * while down, one call per `retryIntervalMs` probes it and the others are told at once to do without it; the first
 * success brings it back. Hooks that throw are ignored: a failing logger must not break limiting.
 */
export function createOutageGuard(options: OutageGuardOptions = {}): OutageGuard {
  const timeoutMs = options.timeoutMs ?? 500;
  const retryIntervalMs = options.retryIntervalMs ?? 500;
  const clock = options.now ?? Date.now;
  let down = false;
  let nextProbeAt = 0;
  let probing = false;
  let lastError: unknown;

  const failed = (err: unknown) => {
    lastError = err;
    nextProbeAt = clock() + retryIntervalMs;
    if (down) return;
    down = true;
    quietly(() => options.onOutage?.(err));
  };

  return {
    get down() {
      return down;
    },
    bounded: (promise) => withTimeout(promise, timeoutMs),
    async run(call) {
      if (down && (probing || clock() < nextProbeAt)) return { ok: false, error: lastError };
      const isProbe = down;
      if (isProbe) probing = true;
      try {
        const value = await withTimeout(call(), timeoutMs);
        if (down) {
          down = false;
          quietly(() => options.onRecover?.());
        }
        return { ok: true, value };
      } catch (err) {
        failed(err);
        return { ok: false, error: err };
      } finally {
        if (isProbe) probing = false;
      }
    },
  };
}

function quietly(hook: () => void): void {
  try {
    hook();
  } catch {
    // ignored, see createOutageGuard
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Rate-limit store timed out after ${ms} ms`)), ms);
    timer.unref();
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
