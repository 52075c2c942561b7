import type { Server } from 'node:http';
import type { Config } from '../config/load.js';
import { trackConnections, type GracefulStop } from '../http/graceful-stop.js';
import type { Logger } from '../logger.js';

export interface ShutdownOptions {
  config: Pick<Config, 'shutdownDrainMs' | 'shutdownTimeoutMs' | 'http'>;
  logger: Logger;
  /** Told once, when a stop signal arrives (/readyz answers 503 from then on). */
  onStopping: () => void;
  /** Closes what the process opened, after the last answer. */
  closeDependencies: () => Promise<void>;
}

/** Stops accepting, finishes the requests in flight (destroying what is left at the deadline), closes, exits. */
function finish(connections: GracefulStop, options: ShutdownOptions): void {
  const { config, logger } = options;
  const force = setTimeout(() => {
    logger.warn(
      { timeoutMs: config.shutdownTimeoutMs },
      'requests still in flight at the shutdown deadline; closing them',
    );
    connections.destroyAll();
  }, config.shutdownTimeoutMs);
  force.unref();
  logger.info('no new connections; finishing requests in flight');
  // A connection accepted before this point whose request is still on its way gets until the header timeout.
  connections.close({ freshGraceMs: config.http.headersTimeoutMs }).then(
    () => {
      clearTimeout(force);
      options.closeDependencies().then(
        () => {
          logger.info('stopped');
          process.exit(0);
        },
        (err: unknown) => {
          logger.error({ err: (err as Error).message }, 'error while closing');
          process.exit(1);
        },
      );
    },
    (err: unknown) => logger.error({ err: (err as Error).message }, 'error while closing the server'),
  );
}

/**
 * SIGTERM (orchestrators): /readyz answers 503 and answers close their connections for SHUTDOWN_DRAIN_MS while the
 * server still accepts, so load balancers notice before connections are refused; then stop. SIGINT (a terminal's
 * Ctrl-C) stops without the drain. Once stopping, every answer closes its connection: keep-alive clients reconnect
 * elsewhere instead of holding this process open until the shutdown deadline.
 */
export function installShutdown(server: Server, options: ShutdownOptions): void {
  const connections = trackConnections(server);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    options.onStopping();
    connections.beginStop();
    const drainMs = signal === 'SIGTERM' ? options.config.shutdownDrainMs : 0;
    options.logger.info({ signal, drainMs }, 'shutting down: /readyz answers 503; finishing requests in flight');
    if (drainMs === 0) finish(connections, options);
    else setTimeout(() => finish(connections, options), drainMs);
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
