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
export function postgresKeyChanges(options: ListenOptions & { pool: pg.Pool }): KeyChangeFeed {
  const listeners = new Set<() => void>();
  const tell = () => {
    for (const listener of listeners) listener();
  };
  const session = new ListenSession(options, tell);
  return {
    async publish(keyId) {
      // Heard here at once; the other processes hear it through PostgreSQL.
      tell();
      await options.pool.query('SELECT pg_notify($1, $2)', [KEY_CHANGES_CHANNEL, String(keyId)]);
    },
    subscribe(listener) {
      listeners.add(listener);
      void session.start();
      return () => listeners.delete(listener);
    },
    ready: () => session.start(),
    async close() {
      listeners.clear();
      await session.close();
    },
  };
}

interface ListenOptions {
  listenUrl: string;
  onError?: (err: Error) => void;
  maxReconnectDelayMs?: number;
}

/** The dedicated LISTEN connection: opened at the first `start`, re-opened with a back-off whenever it drops. */
class ListenSession {
  #client: pg.Client | undefined;
  #closed = false;
  #attempt = 0;
  #retry: NodeJS.Timeout | undefined;
  #listening: Promise<void> | undefined;
  #markListening: (() => void) | undefined;

  /** `heard`: a key changed, or changes may have been missed while no LISTEN was in place. */
  constructor(
    private readonly options: ListenOptions,
    private readonly heard: () => void,
  ) {}

  /** Resolves once a LISTEN is in place (or the session is closed). */
  start(): Promise<void> {
    if (this.#listening) return this.#listening;
    this.#listening = new Promise<void>((resolve) => {
      this.#markListening = resolve;
    });
    void this.#connect();
    return this.#listening;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    this.#markListening?.();
    const last = this.#client;
    this.#client = undefined;
    await last?.end().catch(() => undefined);
  }

  async #connect(): Promise<void> {
    const { listenUrl, onError } = this.options;
    const next = new pg.Client({ connectionString: listenUrl, keepAlive: true, connectionTimeoutMillis: 5000 });
    this.#client = next;
    const lost = (err?: Error) => {
      if (this.#client !== next) return;
      this.#client = undefined;
      if (err) onError?.(err);
      next.removeAllListeners('notification');
      void next.end().catch(() => undefined);
      this.#schedule();
    };
    next.on('error', lost);
    next.on('end', () => lost());
    next.on('notification', (message) => {
      if (message.channel === KEY_CHANGES_CHANNEL) this.heard();
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${KEY_CHANGES_CHANNEL}`);
    } catch (err) {
      lost(err as Error);
      return;
    }
    if (this.#closed) {
      await next.end().catch(() => undefined);
      return;
    }
    // Anything changed while no LISTEN was in place went unheard: forget everything once.
    if (this.#attempt > 0) this.heard();
    this.#attempt = 0;
    this.#markListening?.();
  }

  #schedule(): void {
    if (this.#closed || this.#retry) return;
    const delay = Math.min(100 * 2 ** this.#attempt, this.options.maxReconnectDelayMs ?? 5000);
    this.#attempt++;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      void this.#connect();
    }, delay);
    this.#retry.unref();
  }
}
