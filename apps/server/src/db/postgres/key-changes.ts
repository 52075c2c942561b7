import pg from 'pg';
import type { KeyChangeFeed } from '../types.js';

/** The PostgreSQL channel key changes are announced on. */
export const KEY_CHANGES_CHANNEL = 'animal_store_api_keys';

/**
 * PostgreSQL LISTEN/NOTIFY. `pg_notify` goes through the pool as a plain statement (fine behind PgBouncer in
 * transaction mode). LISTEN needs a session of its own, so it uses one dedicated connection to `listenUrl` (the
 * direct URL: through a transaction-mode pooler a LISTEN would be lost), opened at the first subscription and
 * re-opened with a back-off when it drops; each re-open tells the listeners, since changes may have been missed.
 */
export function postgresKeyChanges(options: {
  pool: pg.Pool;
  listenUrl: string;
  onError?: (err: Error) => void;
  maxReconnectDelayMs?: number;
}): KeyChangeFeed {
  const listeners = new Set<() => void>();
  const tell = () => {
    for (const listener of listeners) listener();
  };
  let client: pg.Client | undefined;
  let closed = false;
  let attempt = 0;
  let retry: NodeJS.Timeout | undefined;
  let listening: Promise<void> | undefined;
  let markListening: (() => void) | undefined;

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: options.listenUrl, keepAlive: true, connectionTimeoutMillis: 5000 });
    client = next;
    const lost = (err?: Error) => {
      if (client !== next) return;
      client = undefined;
      if (err) options.onError?.(err);
      next.removeAllListeners('notification');
      void next.end().catch(() => undefined);
      schedule();
    };
    next.on('error', lost);
    next.on('end', () => lost());
    next.on('notification', (message) => {
      if (message.channel === KEY_CHANGES_CHANNEL) tell();
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${KEY_CHANGES_CHANNEL}`);
    } catch (err) {
      lost(err as Error);
      return;
    }
    if (closed) {
      await next.end().catch(() => undefined);
      return;
    }
    // Anything changed while no LISTEN was in place went unheard: forget everything once.
    if (attempt > 0) tell();
    attempt = 0;
    markListening?.();
  };

  const schedule = () => {
    if (closed || retry) return;
    const delay = Math.min(100 * 2 ** attempt, options.maxReconnectDelayMs ?? 5000);
    attempt++;
    retry = setTimeout(() => {
      retry = undefined;
      void connect();
    }, delay);
    retry.unref();
  };

  const start = () => {
    if (listening) return listening;
    listening = new Promise<void>((resolve) => {
      markListening = resolve;
    });
    void connect();
    return listening;
  };

  return {
    async publish(keyId) {
      // Heard here at once; the other processes hear it through PostgreSQL.
      tell();
      await options.pool.query('SELECT pg_notify($1, $2)', [KEY_CHANGES_CHANNEL, String(keyId)]);
    },
    subscribe(listener) {
      listeners.add(listener);
      void start();
      return () => listeners.delete(listener);
    },
    ready: () => start(),
    async close() {
      closed = true;
      clearTimeout(retry);
      listeners.clear();
      markListening?.();
      const last = client;
      client = undefined;
      await last?.end().catch(() => undefined);
    },
  };
}
