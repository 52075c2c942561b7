import type * as HttpModule from 'node:http';
import type { ServerResponse } from 'node:http';
import { Worker, type MessagePort } from 'node:worker_threads';

/** How often the main event loop beats (ms). */
const BEAT_MS = 100;

export interface LivenessOptions {
  /** OPS_PORT and the address to listen on. */
  readonly port: number;
  readonly host: string;
  /** The main thread's own listener of /readyz and /metrics (127.0.0.1), where the worker sends everything else. */
  readonly upstreamPort: number;
  /** The main event loop is wedged once it has not beaten for this long (ms): /healthz then answers 503. */
  readonly stallMs: number;
  /** Node's timeouts for slow clients (config's HTTP_*). */
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
}

export interface Liveness {
  /** The port the worker listens on (OPS_PORT, or the one it was given for 0). */
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * OPS_PORT, served by a thread of its own: `/healthz` answers from a heartbeat that the main event loop writes into
 * shared memory every 100 ms, so a probe is never delayed by load on the main loop (which a probe answered there
 * waits behind, one turn or more), yet stays truthful: once the main loop has not beaten for `stallMs` (wedged: a
 * synchronous loop, a deadlock), `/healthz` answers 503 and the orchestrator restarts the process. Every other request
 * (`/readyz`, `/metrics`, and the 404s) is passed to the main thread's own listener of them, so readiness is the main
 * loop's and the database's answer, as late as they are.
 */
export async function startLiveness(options: LivenessOptions): Promise<Liveness> {
  const beats = new Int32Array(new SharedArrayBuffer(4));
  const heart = setInterval(() => Atomics.add(beats, 0, 1), BEAT_MS).unref();
  const worker = new Worker(`(${livenessWorker.toString()})()`, {
    eval: true,
    workerData: { ...options, beats },
  });
  worker.unref();
  try {
    const port = await new Promise<number>((resolve, reject) => {
      worker.once('message', (message: { port?: number; error?: string }) =>
        message.port !== undefined ? resolve(message.port) : reject(new Error(message.error)),
      );
      worker.once('error', reject);
    });
    return {
      port,
      async stop() {
        clearInterval(heart);
        await worker.terminate();
      },
    };
  } catch (err) {
    clearInterval(heart);
    await worker.terminate();
    throw err;
  }
}

/**
 * The worker's body. It runs from its own source text (Worker `eval`), so it uses nothing outside itself: only Node's
 * modules through `require`, and `workerData`.
 */
function livenessWorker(): void {
  /* eslint-disable @typescript-eslint/no-require-imports -- an eval'd worker is a CommonJS script */
  const http = require('node:http') as typeof HttpModule;
  const thread = require('node:worker_threads') as { workerData: unknown; parentPort: MessagePort | null };
  /* eslint-enable @typescript-eslint/no-require-imports */
  const options = thread.workerData as LivenessOptions & { beats: Int32Array };
  const { parentPort } = thread;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  let lastBeat = Atomics.load(options.beats, 0);
  let beatAt = performance.now();
  setInterval(() => {
    const beat = Atomics.load(options.beats, 0);
    if (beat !== lastBeat) [lastBeat, beatAt] = [beat, performance.now()];
  }, 25);
  const json = (res: ServerResponse, status: number, body: object, extra = {}) => {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(text),
      'Cache-Control': 'no-store',
      ...extra,
    });
    res.end(text);
  };
  const server = http.createServer((req, res) => {
    if (req.url === '/healthz' && (req.method === 'GET' || req.method === 'HEAD')) {
      const stalled = Math.round(performance.now() - beatAt);
      if (stalled <= options.stallMs) json(res, 200, { status: 'ok' });
      else {
        const message = `The event loop has not run for ${stalled} ms`;
        json(res, 503, { code: 'service_unavailable', message, status: 503 }, { 'Retry-After': '1' });
      }
      return;
    }
    const upstream = { host: '127.0.0.1', port: options.upstreamPort, agent, path: req.url };
    const forward = http.request({ ...upstream, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => {
      if (res.headersSent) res.destroy();
      else json(res, 503, { code: 'service_unavailable', message: 'Not ready', status: 503 }, { 'Retry-After': '1' });
    });
    req.pipe(forward);
  });
  server.headersTimeout = options.headersTimeoutMs;
  server.requestTimeout = options.requestTimeoutMs;
  server.on('error', (err) => parentPort?.postMessage({ error: err.message }));
  server.listen(options.port, options.host, () => {
    const address = server.address();
    parentPort?.postMessage({ port: typeof address === 'object' && address ? address.port : options.port });
  });
}
