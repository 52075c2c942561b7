import { connect, type Socket } from 'node:net';

/** Sends raw bytes on a new connection; resolves with everything received once the server closes it. */
export async function exchange(port: number, ...chunks: (string | Uint8Array)[]): Promise<string> {
  const socket: Socket = connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (d: Buffer) => (received += d.toString()));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  for (const chunk of chunks) socket.write(chunk);
  await closed;
  return received;
}

/** The status line's code of every answer in `raw`: one request, one answer. */
export function statusesOf(raw: string): number[] {
  // An answer follows the previous one's body directly: its status line is found anywhere.
  return [...raw.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
}

/** The one answer in `raw`: its status, Content-Type and parsed Error body. */
export function errorResponse(raw: string): {
  status: number;
  contentType: string | undefined;
  body: { code: string; status: number; message: string };
} {
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]),
    contentType: /\r\ncontent-type: ([^\r]+)/i.exec(head)?.[1],
    body: JSON.parse(body) as { code: string; status: number; message: string },
  };
}
