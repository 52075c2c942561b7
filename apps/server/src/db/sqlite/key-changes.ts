import type { KeyChangeFeed } from '../types.js';

/** One process only (SQLite): listeners hear a change at once; nothing crosses processes (the TTL covers the key CLI). */
export function inProcessKeyChanges(): KeyChangeFeed {
  const listeners = new Set<() => void>();
  return {
    async publish() {
      for (const listener of listeners) listener();
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    ready: () => Promise.resolve(),
    close: async () => listeners.clear(),
  };
}
