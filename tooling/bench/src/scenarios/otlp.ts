/**
 * The server's OTLP span encoding (apps/server telemetry/otlp-proto.ts) against the official serializer it replaces
 * (@opentelemetry/otlp-transformer's ProtobufTraceSerializer), in this process: batches of 512 spans shaped as the
 * server's sampled requests make them (a SERVER span, its key lookup, rate-limit decision and query, and now and then
 * a shared query linked to eight requests), each request's ids, path and statement its own. Both encode the same
 * batches in alternating rounds; the run stops if their bytes differ. Then a sampled request's contexts
 * (telemetry/lean-context.ts against the API's ROOT_CONTEXT): time and bytes allocated, alternating rounds too.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { contexts, printContexts } from '../context-cost.js';
import { SERVER_DIST } from '../paths.js';
import type { Scenario } from '../scenario.js';
import { median } from '../stats.js';
import { table } from '../table.js';

const BATCH = 512;
const BATCHES = 8;
const ROUNDS = 7;
const ROUND_MS = 400;

type Encode = (spans: unknown[]) => Uint8Array | undefined;

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const resource = { attributes: { 'service.name': 'animal-store', 'service.version': '1.0.0', 'host.name': 'bench' } };
const scope = { name: '@animal-store/server' };
const QUERY =
  'SELECT "id", "name", "status", "categoryId", "tags" FROM "Pet" WHERE "status" = ? AND "id" > ? ORDER BY "id" LIMIT ?';

/** One span as the SDK hands it to an exporter (the fields the encoders read). */
function span(
  traceId: string,
  parent: string | undefined,
  name: string,
  kind: number,
  attributes: Record<string, string | number | boolean>,
  links: { traceId: string; spanId: string }[] = [],
) {
  const spanId = hex(8);
  const context = { traceId, spanId, traceFlags: 1 };
  const start = [1_764_300_000 + Math.floor(Math.random() * 1000), Math.floor(Math.random() * 1e9)];
  return {
    spanId,
    value: {
      name,
      kind,
      spanContext: () => context,
      parentSpanContext: parent ? { traceId, spanId: parent, traceFlags: 1 } : undefined,
      startTime: start,
      endTime: [start[0], Math.min(999_999_999, start[1]! + 350_000)],
      attributes,
      links: links.map((l) => ({ context: { ...l, traceFlags: 1 } })),
      events: [],
      status: { code: 0 },
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
      resource,
      instrumentationScope: scope,
    },
  };
}

/** A batch of BATCH spans: requests of four spans, every fourth request followed by a shared query of eight links. */
function batch(): unknown[] {
  const spans: unknown[] = [];
  const served: { traceId: string; spanId: string }[] = [];
  for (let n = 0; spans.length < BATCH; n++) {
    const traceId = hex(16);
    const server = span(traceId, undefined, 'GET /v1/pets', 1, {
      'http.request.method': 'GET',
      'url.path': '/v1/pets',
      'url.scheme': 'http',
      'server.address': '127.0.0.1',
      'server.port': 3000,
      'client.address': '127.0.0.1',
      'network.protocol.version': '1.1',
      'http.response.status_code': 200,
      'http.route': '/v1/pets',
    });
    served.push({ traceId, spanId: server.spanId });
    const lookup = span(traceId, server.spanId, 'api_key lookup', 0, {
      'animal_store.api_key.cache_hit': true,
      'animal_store.api_key.id': `key-${n % 40}`,
      'animal_store.api_key.plan': 'pro',
    });
    const limit = span(traceId, server.spanId, 'rate_limit', 0, {
      'animal_store.rate_limit.store': 'memory',
      'animal_store.rate_limit.outcome': 'allowed',
    });
    const query = span(traceId, server.spanId, 'SELECT pets', 2, {
      'db.system.name': 'sqlite',
      'db.operation.name': 'SELECT',
      'db.collection.name': 'pets',
      'db.query.text': QUERY,
    });
    spans.push(server.value, lookup.value, limit.value, query.value);
    if (n % 4 === 3) {
      const [first] = served.slice(-8);
      const shared = span(
        first!.traceId,
        first!.spanId,
        'SELECT pets',
        2,
        { 'animal_store.batch.size': 8 },
        served.slice(-8),
      );
      spans.push(shared.value);
    }
  }
  return spans.slice(0, BATCH);
}

/** µs per span of `encode` over the batches, encoding for about ROUND_MS. */
function timed(encode: Encode, batches: unknown[][]): number {
  let spans = 0;
  const started = process.hrtime.bigint();
  const until = started + BigInt(ROUND_MS) * 1_000_000n;
  while (process.hrtime.bigint() < until) {
    for (const b of batches) encode(b);
    spans += BATCH * batches.length;
  }
  return Number(process.hrtime.bigint() - started) / 1e3 / spans;
}

export const otlp: Scenario = {
  name: 'otlp',
  description: "the server's OTLP span encoding and request contexts vs the official ones they replace",
  async run() {
    console.log(`\nOTLP span encoding: ${BATCHES} batches of ${BATCH} spans, ${ROUNDS} alternating rounds ...`);
    const url = pathToFileURL(join(SERVER_DIST, 'telemetry/otlp-proto.js')).href;
    const { encodeSpans } = (await import(url)) as { encodeSpans: Encode };
    const official: Encode = (spans) => ProtobufTraceSerializer.serializeRequest(spans as never);
    const batches = Array.from({ length: BATCHES }, batch);
    for (const b of batches)
      if (!Buffer.from(encodeSpans(b)!).equals(Buffer.from(official(b)!)))
        throw new Error('otlp: the server encoding differs from the official serializer');
    const bytes = batches.reduce((sum, b) => sum + encodeSpans(b)!.length, 0) / (BATCH * BATCHES);
    const ours: number[] = [];
    const theirs: number[] = [];
    timed(official, batches);
    timed(encodeSpans, batches); // warm-up
    for (let r = 0; r < ROUNDS; r++) {
      if (r % 2) ours.push(timed(encodeSpans, batches));
      theirs.push(timed(official, batches));
      if (!(r % 2)) ours.push(timed(encodeSpans, batches));
    }
    const result = {
      oursUs: median(ours),
      officialUs: median(theirs),
      bytesPerSpan: bytes,
      contexts: await contexts(ROUNDS),
    };
    return {
      json: { otlp: result },
      print(out) {
        out(`\nOTLP span encoding (in-process, medians of ${ROUNDS} alternating rounds, same bytes checked):\n`);
        out(
          table(
            ['encoder', 'µs per span', 'vs official'],
            [
              ['official ProtobufTraceSerializer', result.officialUs.toFixed(2), '1.00x'],
              [
                'server telemetry/otlp-proto.ts',
                result.oursUs.toFixed(2),
                `${(result.oursUs / result.officialUs).toFixed(2)}x`,
              ],
            ],
          ),
        );
        out(`\n${bytes.toFixed(0)} bytes per span encoded.`);
        printContexts(out, result.contexts);
      },
    };
  },
};
