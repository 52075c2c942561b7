/**
 * A service started as a child process for a test (the built server, a registry): its output kept for the error
 * message, a bounded wait until it answers over HTTP, and a stop that ends it (SIGTERM, then SIGKILL after 5 s).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export interface ChildService {
  child: ChildProcess;
  /** Everything it printed so far. */
  output(): string;
  /** Ends it and waits for its exit; safe to call twice. */
  stop(): Promise<void>;
  /** Resolves once `url` answers 2xx; rejects when the process exits first or after `timeoutMs`. */
  waitForHttp(url: string, timeoutMs: number): Promise<void>;
}

export function startChildService(name: string, command: string, args: string[], env: NodeJS.ProcessEnv): ChildService {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    output: () => output,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
    waitForHttp: async (url, timeoutMs) => {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}:\n${output}`);
        try {
          if ((await fetch(url, { signal: AbortSignal.timeout(1000) })).ok) return;
        } catch {
          // not listening yet
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`${name} did not answer GET ${url} within ${timeoutMs} ms:\n${output}`);
    },
  };
}

/**
 * The machine's ephemeral port range, from which the kernel picks the local port of every outgoing connection.
 * A server cannot count on binding a port in it: while any connection on the machine holds the port as its local
 * end, the bind fails with EADDRINUSE.
 */
export function ephemeralPortRange(): readonly [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return [low!, high!];
  } catch {
    // Not Linux: the IANA dynamic range, which the other systems use.
  }
  return [49152, 65535];
}

/** Lowest port {@link restartablePort} picks: above the registered ports of the services a machine may run. */
const RESTARTABLE_FLOOR = 20_000;

/**
 * A port nothing listens on now, below the ephemeral range, for a service a test stops and starts again on the same
 * port: a port from {@link freePort} lies in that range, where an outgoing connection may take it while the service is
 * down, and the restart then cannot bind it.
 */
export async function restartablePort(): Promise<number> {
  const [low] = ephemeralPortRange();
  const span = low - RESTARTABLE_FLOOR;
  if (span < 1_000) throw new Error(`the ephemeral range starts at ${low}: no room below it for a restartable port`);
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = RESTARTABLE_FLOOR + Math.floor(Math.random() * span);
    const server = createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (bound) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      return port;
    }
  }
  throw new Error(`no free port between ${RESTARTABLE_FLOOR} and ${low}`);
}

/** A port nothing listens on now (bound on 127.0.0.1, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}
