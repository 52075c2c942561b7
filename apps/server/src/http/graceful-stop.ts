import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import net, { type Socket } from 'node:net';

interface ConnectionState {
  /** Requests seen on this connection. 0: accepted, its first request may still be on its way. */
  requests: number;
  /** The response in progress, if any. */
  response: ServerResponse | undefined;
}

/** Stops a server without losing a request that reached it; see {@link trackConnections}. */
export interface GracefulStop {
  /** True once `stop` was called: answers carry `Connection: close`. */
  readonly stopping: boolean;
  /** Marks the server as stopping (answers close their connections) without closing anything yet. */
  beginStop(): void;
  /**
   * Stops accepting, closes keep-alive connections that sit idle between requests, and resolves once every connection
   * has closed. A connection with a request in progress is closed after its answer; a connection accepted but whose
   * first request has not arrived yet is left open until `freshGraceMs` passes, so a request already sent is answered.
   */
  close(options: { freshGraceMs: number }): Promise<void>;
  /** Destroys every connection still open (the shutdown deadline). */
  destroyAll(): void;
}

/**
 * Tracks the server's connections for a graceful stop. Node's `server.close()` also closes "idle" connections, and a
 * connection accepted a moment ago whose request bytes are still in flight counts as idle: that request is then lost
 * (ECONNRESET). Here the listening socket is closed alone, and only connections that already served a request and
 * wait for the next one are closed as idle.
 */
export function trackConnections(server: Server): GracefulStop {
  const connections = new Map<Socket, ConnectionState>();
  let stopping = false;

  const closeWhenIdle = (socket: Socket, state: ConnectionState) => {
    if (state.response === undefined && state.requests > 0) socket.end();
  };

  server.on('connection', (socket: Socket) => {
    connections.set(socket, { requests: 0, response: undefined });
    socket.once('close', () => connections.delete(socket));
  });
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const state = connections.get(req.socket);
    if (stopping) res.setHeader('Connection', 'close');
    if (!state) return;
    state.requests++;
    state.response = res;
    res.once('finish', () => {
      if (state.response === res) state.response = undefined;
      // An answer whose headers went out before the stop kept the connection alive: close it now that it is idle.
      if (stopping) setImmediate(() => closeWhenIdle(req.socket, state));
    });
  });

  return {
    get stopping() {
      return stopping;
    },
    beginStop() {
      if (stopping) return;
      stopping = true;
      for (const state of connections.values()) {
        const res = state.response;
        if (res && !res.headersSent) res.setHeader('Connection', 'close');
      }
    },
    close({ freshGraceMs }) {
      this.beginStop();
      const closed = new Promise<void>((resolve) => {
        // net.Server's close, not http.Server's: that one would also close connections whose first request is unread.
        net.Server.prototype.close.call(server, () => resolve());
      });
      for (const [socket, state] of connections) closeWhenIdle(socket, state);
      const fresh = setTimeout(() => {
        for (const [socket, state] of connections) if (state.requests === 0) socket.destroy();
      }, freshGraceMs);
      fresh.unref();
      return closed.finally(() => clearTimeout(fresh));
    },
    destroyAll() {
      for (const socket of connections.keys()) socket.destroy();
    },
  };
}
