/**
 * The exporter against a real OTLP/HTTP receiver: each request sent from its worker thread (node:http's client never
 * runs on this one), the outcome of every export reported back, the worker's warnings in this thread's log, and
 * nothing lost at shutdown.
 */
import http, { createServer } from 'node:http';
import { Worker } from 'node:worker_threads';
import { diag, DiagLogLevel } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { freePort, startOtlpReceiver, type OtlpReceiver } from '@animal-store/test-services';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { listenLocally } from '../../test/listen.js';
import { OtlpSpanExporter } from './otlp-exporter.js';

let receiver: OtlpReceiver;
const exporters: OtlpSpanExporter[] = [];
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(() => receiver.close());
afterEach(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  diag.disable();
  await Promise.all(exporters.splice(0).map((e) => e.shutdown()));
});

/** An exporter of `protocol` to `endpoint`, which its worker reads from the environment as the official one does. */
function exporterTo(endpoint: string, protocol: 'http/protobuf' | 'http/json' = 'http/protobuf', timeoutMs = 10_000) {
  vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', endpoint);
  vi.stubEnv('OTEL_EXPORTER_OTLP_TIMEOUT', String(timeoutMs));
  const exporter = new OtlpSpanExporter(protocol);
  exporters.push(exporter);
  return exporter;
}

/** `n` finished spans of the SDK, named `<prefix>-<i>`. */
function spans(n: number, prefix: string): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const tracer = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: memory })] }).getTracer(
    'test',
  );
  for (let i = 0; i < n; i++) tracer.startSpan(`${prefix}-${i}`).end();
  return memory.getFinishedSpans();
}

const exported = (exporter: OtlpSpanExporter, batch: ReadableSpan[]) =>
  new Promise<ExportResult>((resolve) => exporter.export(batch, resolve));

const namesReceived = (prefix: string) =>
  receiver
    .spans()
    .map((s) => s.name)
    .filter((name) => name.startsWith(`${prefix}-`))
    .sort();

describe.each(['http/protobuf', 'http/json'] as const)('over %s', (protocol) => {
  it('sends from its worker thread: no node:http request is made on this one', async () => {
    const end = vi.spyOn(http.ClientRequest.prototype, 'end');
    const exporter = exporterTo(receiver.url, protocol);
    const prefix = `worker-${protocol}`;
    expect(await exported(exporter, spans(3, prefix))).toEqual({ code: ExportResultCode.SUCCESS });
    expect(namesReceived(prefix)).toEqual([`${prefix}-0`, `${prefix}-1`, `${prefix}-2`]);
    expect(end).not.toHaveBeenCalled();
  });
});

it('answers a failed export with its reason', async () => {
  const exporter = exporterTo(`http://127.0.0.1:${await freePort()}`, 'http/protobuf', 1000);
  const result = await exported(exporter, spans(1, 'refused'));
  expect(result.code).toBe(ExportResultCode.FAILED);
  expect(result.error?.message).toMatch(/ECONNREFUSED|timeout|retryable/i);
});

it("passes the worker's warnings to this thread's log", async () => {
  // A collector that answers 200 with a body that is no ExportTraceServiceResponse: the official delegate warns.
  const liar = await listenLocally(
    createServer((req, res) => {
      req.resume();
      req.on('end', () =>
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(Buffer.from([0xff, 0xff])),
      );
    }),
  );
  try {
    const warnings: string[] = [];
    const quiet = () => {};
    diag.setLogger(
      { warn: (m) => warnings.push(m), error: (m) => warnings.push(m), info: quiet, debug: quiet, verbose: quiet },
      DiagLogLevel.WARN,
    );
    const exporter = exporterTo(liar.origin);
    expect((await exported(exporter, spans(1, 'liar'))).code).toBe(ExportResultCode.SUCCESS);
    expect(warnings.join('\n')).toMatch(/could not deserialize response/);
  } finally {
    await liar.close();
  }
});

it('sends what is pending before shutdown resolves, and refuses exports after it', async () => {
  const exporter = exporterTo(receiver.url);
  const results = [exported(exporter, spans(2, 'pending-a')), exported(exporter, spans(2, 'pending-b'))];
  await exporter.shutdown();
  expect(namesReceived('pending')).toEqual(['pending-a-0', 'pending-a-1', 'pending-b-0', 'pending-b-1']);
  expect((await Promise.all(results)).map((r) => r.code)).toEqual([ExportResultCode.SUCCESS, ExportResultCode.SUCCESS]);
  const late = await exported(exporter, spans(1, 'late'));
  expect(late.code).toBe(ExportResultCode.FAILED);
  expect(late.error?.message).toMatch(/shut down/);
});

it('starts another worker when its worker stops, failing only what that one had not answered', async () => {
  const errors: string[] = [];
  const quiet = () => {};
  diag.setLogger({ error: (m) => errors.push(m), warn: quiet, info: quiet, debug: quiet, verbose: quiet });
  const posted = vi.spyOn(Worker.prototype, 'postMessage');
  const workers = () => posted.mock.contexts as Worker[];
  // A collector that never answers: the export is still in flight when its worker stops.
  const server = createServer(() => {});
  const silent = await listenLocally(server);
  try {
    const exporter = exporterTo(silent.origin, 'http/protobuf', 1000);
    const inFlight = exported(exporter, spans(1, 'lost'));
    await workers().at(-1)!.terminate();
    const lost = await inFlight;
    expect(lost.code).toBe(ExportResultCode.FAILED);
    expect(lost.error?.message).toMatch(/worker stopped/);
    expect(errors.join('\n')).toMatch(/worker stopped; the next export starts another/);
    // The next export goes through a new worker (and stays in flight: the collector is still silent).
    void exported(exporter, spans(1, 'next'));
    expect(workers()).toHaveLength(2);
    expect(workers()[1]).not.toBe(workers()[0]);
  } finally {
    server.closeAllConnections(); // the request it never answers
    await silent.close();
  }
});
