/**
 * A sampled request's contexts, for the otlp scenario: the server's (apps/server telemetry/lean-context.ts) against
 * the API's ROOT_CONTEXT, which it replaces on a sampled request, in this process, in alternating rounds: time and
 * bytes allocated per request.
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { getHeapStatistics } from 'node:v8';
import { SERVER_DIST } from './paths.js';
import type { Out } from './scenario.js';
import { median } from './stats.js';
import { table } from './table.js';

const REQUESTS = 100_000;

/** Nanoseconds and bytes allocated per request. */
interface Cost {
  ns: number;
  bytes: number;
}

/** The parts of @opentelemetry/api the contexts are measured with (the bench does not depend on it itself). */
interface Context {
  getValue(key: symbol): unknown;
  setValue(key: symbol, value: unknown): Context;
  deleteValue(key: symbol): Context;
}
type Span = object;
interface Api {
  ROOT_CONTEXT: Context;
  trace: {
    setSpan(context: Context, span: Span): Context;
    getSpan(context: Context): Span | undefined;
    wrapSpanContext(context: { traceId: string; spanId: string; traceFlags: number }): Span;
  };
}

/** The API as the built server resolves it: the same package its contexts run with. */
async function serverApi(): Promise<Api> {
  const path = createRequire(join(SERVER_DIST, 'main.js')).resolve('@opentelemetry/api');
  return (await import(pathToFileURL(path).href)) as Api;
}

/** Bytes V8 has allocated so far (Node 22 and later; NaN before). */
const allocatedBytes = () =>
  (getHeapStatistics() as { total_allocated_bytes?: number }).total_allocated_bytes ?? Number.NaN;

/**
 * A sampled request's contexts over `root`, as the server derives them: its SERVER span's, a child span's over that
 * (inSpan), each read back; over REQUESTS requests.
 */
function contextsOf({ trace }: Api, root: Context, span: Span): Cost {
  const allocated = allocatedBytes();
  const started = process.hrtime.bigint();
  let found = 0;
  for (let i = 0; i < REQUESTS; i++) {
    const request = trace.setSpan(root, span);
    const child = trace.setSpan(request, span);
    if (trace.getSpan(child) === span && trace.getSpan(request) === span) found++;
  }
  const ns = Number(process.hrtime.bigint() - started) / REQUESTS;
  if (found !== REQUESTS) throw new Error('otlp: a context lost its span');
  return { ns, bytes: (allocatedBytes() - allocated) / REQUESTS };
}

/** Medians of `rounds` alternating rounds of the API's contexts and the server's. */
export async function contexts(rounds: number): Promise<ContextCost> {
  const url = pathToFileURL(join(SERVER_DIST, 'telemetry/lean-context.js')).href;
  const { LEAN_ROOT } = (await import(url)) as { LEAN_ROOT: Context };
  const api = await serverApi();
  const { ROOT_CONTEXT } = api;
  const span = api.trace.wrapSpanContext({
    traceId: randomBytes(16).toString('hex'),
    spanId: randomBytes(8).toString('hex'),
    traceFlags: 1,
  });
  const official: Cost[] = [];
  const lean: Cost[] = [];
  contextsOf(api, ROOT_CONTEXT, span);
  contextsOf(api, LEAN_ROOT, span); // warm-up
  for (let r = 0; r < rounds; r++) {
    if (r % 2) lean.push(contextsOf(api, LEAN_ROOT, span));
    official.push(contextsOf(api, ROOT_CONTEXT, span));
    if (!(r % 2)) lean.push(contextsOf(api, LEAN_ROOT, span));
  }
  const summary = (xs: Cost[]): Cost => ({
    ns: median(xs.map((x) => x.ns)),
    bytes: median(xs.map((x) => x.bytes)),
  });
  return { rounds, api: summary(official), lean: summary(lean) };
}

export interface ContextCost {
  rounds: number;
  api: Cost;
  lean: Cost;
}

export function printContexts(out: Out, { rounds, api, lean }: ContextCost): void {
  out(`\nA sampled request's contexts (two derived, each read back; medians of ${rounds} alternating rounds):\n`);
  out(
    table(
      ['contexts', 'ns per request', 'bytes allocated', 'time vs API'],
      [
        ["the API's ROOT_CONTEXT", api.ns.toFixed(0), api.bytes.toFixed(0), '1.00x'],
        [
          'server telemetry/lean-context.ts',
          lean.ns.toFixed(0),
          lean.bytes.toFixed(0),
          `${(lean.ns / api.ns).toFixed(2)}x`,
        ],
      ],
    ),
  );
}
