/**
 * The load generator, run as a separate process (`fork`, see load-client.ts) so it never shares an event loop with a
 * server: closed loop (load-closed.ts) or open loop at a fixed rate (load-open.ts).
 *
 * Receives one LoadSpec from the parent over IPC (a mix of thousands of keys is too long for an argument), sends one
 * LoadResult back and exits.
 */
import { closed } from './load-closed.js';
import { open } from './load-open.js';
import type { LoadSpec } from './load-spec.js';

async function main(): Promise<void> {
  const spec = await new Promise<LoadSpec>((resolve) => process.once('message', (m) => resolve(m as LoadSpec)));
  const origin = new URL(spec.origin);
  if (origin.hostname !== '127.0.0.1') throw new Error(`load runs against 127.0.0.1 only, not ${origin.hostname}`);
  const result = spec.mode === 'open' ? await open(spec) : await closed(spec);
  process.send?.(result, () => process.exit(0));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
