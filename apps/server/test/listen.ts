import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on a free port of 127.0.0.1; gives the origin and a close that waits for the server to stop. */
export async function listenLocally(server: Server): Promise<{ origin: string; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Whether `url` refuses connections within about 5 s (the server stopped accepting), asking every 25 ms. */
export async function refusesConnections(url: string): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    const refused = await fetch(url).then(
      () => false,
      () => true,
    );
    if (refused) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return false;
}
