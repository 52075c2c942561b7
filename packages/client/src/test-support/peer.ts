/** A scripted HTTP peer on 127.0.0.1 (ephemeral port): each request gets the next scripted reply. */
import { type IncomingHttpHeaders, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PeerRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A JSON reply, or `'hang-up'` to destroy the socket without answering (a network error for the client). */
export type PeerReply = { status: number; headers?: Record<string, string>; body?: unknown } | 'hang-up';
export type PeerScript = (request: PeerRequest, index: number) => PeerReply;

export interface Peer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** `http://127.0.0.1:<port>/v1`, what a client is configured with. */
  baseUrl: string;
  requests: PeerRequest[];
  close(): Promise<void>;
}

export const RATE_HEADERS = {
  'X-RateLimit-Limit': '60',
  'X-RateLimit-Remaining': '59',
  'X-RateLimit-Reset': '1900000000',
};

export async function startPeer(script: PeerScript | PeerReply[]): Promise<Peer> {
  const requests: PeerRequest[] = [];
  const next: PeerScript = Array.isArray(script)
    ? (_request, index) => script[Math.min(index, script.length - 1)] ?? { status: 500 }
    : script;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      requests.push(request);
      const reply = next(request, requests.length - 1);
      if (reply === 'hang-up') {
        req.socket.destroy();
        return;
      }
      const json = reply.body === undefined ? '' : JSON.stringify(reply.body);
      res.writeHead(reply.status, {
        ...(json ? { 'content-type': 'application/json; charset=utf-8' } : {}),
        ...reply.headers,
      });
      res.end(json);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    baseUrl: `${origin}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on (bound, then released). */
export { freePort as closedPort } from '@animal-store/test-services';

/** Lets real I/O run (setImmediate is not faked) until `condition` holds; bounded. */
export async function until(condition: () => boolean, turns = 5000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('condition not reached');
}
