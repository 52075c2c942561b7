import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pidFrom, portAnswers, run, shared, stopPid, waitFor } from './lifecycle.js';

/** Options of {@link usePgBouncer}. */
export interface PgBouncerOptions {
  /** Listening port on 127.0.0.1 (default 6432). */
  port?: number;
  /** The PostgreSQL server behind it (default 127.0.0.1:5432, trust auth, user postgres). */
  upstreamHost?: string;
  upstreamPort?: number;
  /** Server connections per database and user (default 10): the pool the clients of one database share. */
  poolSize?: number;
}

/** A running PgBouncer; see {@link usePgBouncer}. */
export interface PgBouncer {
  readonly port: number;
  /** A URL of `database` through PgBouncer, user postgres, with `params` as its query. */
  url(database: string, params?: Record<string, string>): string;
  /** This run's use ends; the last user stops the process. */
  release(): Promise<void>;
}

export const PGBOUNCER_PORT = 6432;

/** Debian's package lives in /usr/sbin, which a non-root PATH may miss. */
const BINARY = '/usr/sbin/pgbouncer';

/** The files of an instance's state folder. */
const filesIn = (dir: string) => ({
  ini: join(dir, 'pgbouncer.ini'),
  users: join(dir, 'userlist.txt'),
  pid: join(dir, 'pgbouncer.pid'),
  log: join(dir, 'pgbouncer.log'),
});

/** pgbouncer.ini and its userlist in `dir`: transaction pooling, trust auth, any database passed through. */
function writeConfig(dir: string, port: number, options: PgBouncerOptions): void {
  const files = filesIn(dir);
  writeFileSync(files.users, '"postgres" ""\n', { mode: 0o644 });
  writeFileSync(
    files.ini,
    [
      '[databases]',
      `* = host=${options.upstreamHost ?? '127.0.0.1'} port=${options.upstreamPort ?? 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${files.users}`,
      'pool_mode = transaction',
      'max_client_conn = 2000',
      `default_pool_size = ${options.poolSize ?? 10}`,
      // The machine's PostgreSQL is shared (max_connections 100): give idle server connections back soon, and
      // forget the pools of the databases tests have dropped.
      'server_idle_timeout = 5',
      'autodb_idle_timeout = 30',
      'server_lifetime = 300',
      `pidfile = ${files.pid}`,
      `logfile = ${files.log}`,
      'admin_users = postgres',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
}

/**
 * PgBouncer (Debian's package, 1.18 on bookworm) in `pool_mode = transaction` in front of the machine's PostgreSQL, the
 * way managed PostgreSQL poolers run: a server connection belongs to a client only for one transaction, so nothing of a
 * session (named prepared statements, session advisory locks, plain `SET`) survives from one transaction to the next.
 * Any database name is passed through (`*`), so tests create databases directly and reach them through the pooler.
 *
 * Shared by the test runs of the machine: started if not already answering (a crashed run's leftover is stopped and
 * replaced), stopped when the last run that uses it releases it. Runs as the `postgres` user (PgBouncer refuses root).
 */
export function usePgBouncer(options: PgBouncerOptions = {}): Promise<PgBouncer> {
  const port = options.port ?? PGBOUNCER_PORT;
  const dir = join(tmpdir(), `animal-store-pgbouncer-${port}`);
  const { pid: pidFile, ini } = filesIn(dir);
  const running = () => pidFrom(pidFile, 'pgbouncer');

  const stop = async () => {
    const pid = running();
    if (pid !== undefined) await stopPid(pid, 'SIGTERM');
    rmSync(pidFile, { force: true });
  };

  return shared(dir, {
    healthy: async () => running() !== undefined && (await portAnswers(port)),
    async start() {
      await stop();
      mkdirSync(dir, { recursive: true });
      // The daemon (user postgres) writes its pid and log here.
      chmodSync(dir, 0o777);
      writeConfig(dir, port, options);
      await run(BINARY, ['-d', '-u', 'postgres', ini]);
      await waitFor(
        `PgBouncer on 127.0.0.1:${port}`,
        async () => running() !== undefined && (await portAnswers(port)),
        10_000,
      );
    },
    stop,
    handle: (release) => ({
      port,
      url(database, params = {}) {
        const query = new URLSearchParams(params).toString();
        return `postgresql://postgres@127.0.0.1:${port}/${database}${query ? `?${query}` : ''}`;
      },
      release,
    }),
  });
}
