/**
 * The load generator, run as a separate process (`fork`, see load-client.ts) so it never shares an event loop with a
 * server: closed loop (load-closed.ts) or open loop at a fixed rate (load-open.ts).
 *
 * Receives a LoadSpec as JSON in argv[2]; sends one LoadResult to the parent over IPC and exits.
 */
import { closed } from './load-closed.js';
import { open } from './load-open.js';
import type { LoadSpec } from './load-spec.js';

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '{}') as LoadSpec;
  const origin = new URL(spec.origin);
  if (origin.hostname !== '127.0.0.1') throw new Error(`load runs against 127.0.0.1 only, not ${origin.hostname}`);
  const result = spec.mode === 'open' ? await open(spec) : await closed(spec);
  process.send?.(result, () => process.exit(0));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
