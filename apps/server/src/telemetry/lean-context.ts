import type { Context } from '@opentelemetry/api';

/** A deleted key's value in its entry: the key reads as absent from there down. */
const DELETED = Symbol('deleted');

/** Entries a chain holds before a new value flattens it to one entry per key still set. */
const MAX_DEPTH = 16;

/**
 * An immutable OpenTelemetry Context as a chain of entries: a new value is one small object pointing at the context it
 * derives from, where the API's BaseContext copies its whole Map and makes three closures for each. A sampled request
 * derives a context for its SERVER span and for each span it runs work in; a lookup walks the chain (a few entries).
 * The chain is flattened past MAX_DEPTH so that a context derived in a loop neither slows lookups nor keeps every
 * value it replaced alive. The context it starts from (`base`, the root or an extracted parent) is read last.
 */
export class LeanContext implements Context {
  private constructor(
    private readonly base: Context | undefined,
    private readonly parent: LeanContext | undefined,
    private readonly key: symbol | undefined,
    private readonly value: unknown,
    private readonly depth: number,
  ) {}

  /** An empty chain over `base` (none: no value at all). */
  static over(base?: Context): LeanContext {
    return new LeanContext(base, undefined, undefined, undefined, 0);
  }

  getValue(key: symbol): unknown {
    const entry = LeanContext.entryOf(this, key);
    if (entry) return entry.value === DELETED ? undefined : entry.value;
    return this.base?.getValue(key);
  }

  setValue(key: symbol, value: unknown): Context {
    return this.derive(key, value);
  }

  deleteValue(key: symbol): Context {
    return this.derive(key, DELETED);
  }

  private derive(key: symbol, value: unknown): LeanContext {
    const from = this.depth < MAX_DEPTH ? this : LeanContext.flattened(this);
    return new LeanContext(this.base, from, key, value, from.depth + 1);
  }

  /** The newest entry for `key` in the chain that ends at `from`. */
  private static entryOf(from: LeanContext, key: symbol): LeanContext | undefined {
    for (let at: LeanContext | undefined = from; at; at = at.parent) if (at.key === key) return at;
    return undefined;
  }

  /** The values of the chain that ends at `from`, one entry per key (the newest), over the same base. */
  private static flattened(from: LeanContext): LeanContext {
    const newest = new Map<symbol, unknown>();
    for (let at: LeanContext | undefined = from; at; at = at.parent)
      if (at.key !== undefined && !newest.has(at.key)) newest.set(at.key, at.value);
    let chain = LeanContext.over(from.base);
    for (const [key, value] of newest) chain = new LeanContext(from.base, chain, key, value, chain.depth + 1);
    return chain;
  }
}

/** The empty context a request's trace is built on (the root, when it continues no trace). */
export const LEAN_ROOT: Context = LeanContext.over();
