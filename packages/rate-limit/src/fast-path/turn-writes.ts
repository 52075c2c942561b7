/**
 * The decisions asked for in one turn of the event loop (the requests whose bytes arrived together) leave for Redis in
 * ONE socket write: the connection's socket is corked at the first and uncorked once that turn's I/O has been handled.
 * Each command still has its own reply and timeout; only the system calls are shared. A write per request was the
 * largest single cost of a request on PostgreSQL + Redis; ioredis's auto-pipelining does the same with a Pipeline
 * object per turn, which cost more than it saved (the service's docs/architecture.md#fast-paths).
 *
 * Rule relied on: a single-node ioredis client writes every command to `client.stream`, its net.Socket, with
 * `stream.write` as soon as it is sent (no queue of its own while connected), so `cork()` holds them and `uncork()`
 * writes them with one `writev`. The canary (turn-writes.test.ts) fails if ioredis stops doing so.
 */
import type { Redis } from 'ioredis';

type Corkable = { cork?(): void; uncork(): void; writable?: boolean };

/**
 * A function that corks `client`'s socket until the I/O of this turn has been handled (once per turn, whatever the
 * number of calls). Does nothing while the client has no writable socket.
 */
export function turnWriteCoalescer(client: Redis): () => void {
  let corked: Corkable | undefined;
  const uncork = () => {
    corked?.uncork();
    corked = undefined;
  };
  return () => {
    if (corked !== undefined) return;
    const stream = client.stream as Corkable | undefined;
    if (typeof stream?.cork !== 'function' || !stream.writable) return;
    stream.cork();
    corked = stream;
    setImmediate(uncork);
  };
}
