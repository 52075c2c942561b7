/**
 * The OTLP/HTTP span exporter, in both protocols: the spans are encoded on the main thread (protobuf by otlp-proto.ts,
 * the same bytes at a fraction of the official serializer's CPU; JSON by the official serializer), and the request is
 * sent from a worker thread by the official exporter's transport (endpoint, headers, timeout, compression, retries,
 * the bound on concurrent exports, all from the standard OTEL_EXPORTER_OTLP_* variables, as
 * @opentelemetry/exporter-trace-otlp-* build it). Rule: node:http's client never runs on the main thread. Its
 * requests go through the same functions as the server's own responses and sockets (OutgoingMessage, the parser,
 * streams), and once they have, V8's optimised code for those functions serves both and every answer of the server
 * costs more; a worker has an isolate, and so feedback and optimised code, of its own.
 */
import { createRequire } from 'node:module';
import type * as WorkerThreads from 'node:worker_threads';
import { Worker } from 'node:worker_threads';
import { diag } from '@opentelemetry/api';
import type * as Api from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPExporterBase, type IOtlpExportDelegate } from '@opentelemetry/otlp-exporter-base';
import type * as NodeHttp from '@opentelemetry/otlp-exporter-base/node-http';
import type * as Transformer from '@opentelemetry/otlp-transformer';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import type { OtlpProtocol } from '../config/otel.js';
import { encodeSpans } from './otlp-proto.js';

const CONTENT_TYPE: Record<OtlpProtocol, string> = {
  'http/protobuf': 'application/x-protobuf',
  'http/json': 'application/json',
};

/** What the worker is told: where the official packages are (it requires them by path) and what it sends. */
interface WorkerData {
  modules: { api: string; http: string; transformer: string };
  contentType: string;
}

/** An export's request as the worker gets it: the encoded bytes and how many spans they hold (for its metrics). */
interface Batch {
  data: Uint8Array;
  spans: number;
}

type ToWorker = { id: number; batch: Batch } | { shutdown: true };
type FromWorker =
  | { id: number; code: ExportResultCode; error?: { name: string; message: string } }
  | { diag: 'warn' | 'error'; message: string }
  | { closed: true };

export class OtlpSpanExporter extends OTLPExporterBase<ReadableSpan[]> implements SpanExporter {
  constructor(protocol: OtlpProtocol) {
    super(new WorkerExportDelegate(protocol));
  }
}

/**
 * Serialises on the main thread and hands the bytes to the worker, which answers each export with its result. The
 * worker starts with the exporter, so that it reads the OTEL_EXPORTER_OTLP_* variables when the SDK starts, as the
 * official exporter does; should it ever stop, what it had not answered fails and the next export starts another, so
 * a failure in it does not end tracing for the life of the process. It is referenced only while an export is in
 * flight (or the exporter shuts down): it never keeps an otherwise finished process alive, nor lets one end before its
 * last spans are sent.
 */
class WorkerExportDelegate implements IOtlpExportDelegate<ReadableSpan[]> {
  private readonly serialize: (spans: ReadableSpan[]) => Uint8Array | undefined;
  private readonly workerData: WorkerData;
  private worker: Worker | undefined;
  private readonly pending = new Map<number, { done: (result: ExportResult) => void; settled: Promise<void> }>();
  private sequence = 0;
  private stopped: Promise<void> | undefined;

  constructor(protocol: OtlpProtocol) {
    this.serialize = protocol === 'http/json' ? (spans) => JsonTraceSerializer.serializeRequest(spans) : encodeSpans;
    const require = createRequire(import.meta.url);
    this.workerData = {
      modules: {
        api: require.resolve('@opentelemetry/api'),
        http: require.resolve('@opentelemetry/otlp-exporter-base/node-http'),
        transformer: require.resolve('@opentelemetry/otlp-transformer'),
      },
      contentType: CONTENT_TYPE[protocol],
    };
    this.worker = this.startWorker();
  }

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    if (this.stopped) return done(failure('the exporter is shut down'));
    const data = this.serialize(spans);
    if (!data) return done(failure('Nothing to send'));
    const worker = (this.worker ??= this.startWorker());
    const id = ++this.sequence;
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    if (this.pending.size === 0) worker.ref();
    this.pending.set(id, { done: (result) => (settle(), done(result)), settled });
    // The bytes move to the worker when they own their whole buffer (a pooled Buffer's would take the pool along).
    const own = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength;
    const message: ToWorker = { id, batch: { data, spans: spans.length } };
    worker.postMessage(message, own ? [data.buffer as ArrayBuffer] : []);
  }

  async forceFlush(): Promise<void> {
    await Promise.all([...this.pending.values()].map((p) => p.settled));
  }

  shutdown(): Promise<void> {
    this.stopped ??= (async () => {
      await this.forceFlush();
      const { worker } = this;
      if (!worker) return;
      worker.ref();
      const closed = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage({ shutdown: true } satisfies ToWorker);
      await closed;
    })();
    return this.stopped;
  }

  /** The exporter's own OpenTelemetry metrics: none, as no MeterProvider is set up (the service's are prom-client's). */
  setMetrics(): void {}

  private startWorker(): Worker {
    const worker = new Worker(`(${exportWorker.toString()})()`, { eval: true, workerData: this.workerData });
    worker.unref();
    worker.on('message', (message: FromWorker) => this.received(worker, message));
    worker.on('error', (error) => diag.error(`OTLP export worker failed: ${error.message}`));
    worker.on('exit', () => {
      if (this.worker === worker) this.worker = undefined;
      if (!this.stopped) diag.error('OTLP export worker stopped; the next export starts another');
      for (const id of this.pending.keys()) this.settle(id, failure('the OTLP export worker stopped'));
    });
    return worker;
  }

  private received(worker: Worker, message: FromWorker): void {
    if ('diag' in message) diag[message.diag](message.message);
    else if ('closed' in message) void worker.terminate();
    else
      this.settle(
        message.id,
        message.error ? { code: message.code, error: errorOf(message.error) } : { code: message.code },
      );
  }

  private settle(id: number, result: ExportResult): void {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker?.unref();
    entry.done(result);
  }
}

const failure = (message: string): ExportResult => ({ code: ExportResultCode.FAILED, error: new Error(message) });

function errorOf({ name, message }: { name: string; message: string }): Error {
  const error = new Error(message);
  error.name = name;
  return error;
}

/**
 * The worker's body. It runs from its own source text (Worker `eval`), so it uses nothing outside itself: Node's
 * modules and the official packages through `require` (by the paths it is given), and `workerData`. The official
 * delegate sends each request's bytes as they come (its serializer passes them through) and reads the collector's
 * answer (partial success) itself; its warnings go to the main thread's log.
 */
function exportWorker(): void {
  /* eslint-disable @typescript-eslint/no-require-imports -- an eval'd worker is a CommonJS script */
  const thread = require('node:worker_threads') as typeof WorkerThreads;
  const { modules, contentType } = thread.workerData as WorkerData;
  const api = require(modules.api) as typeof Api;
  const http = require(modules.http) as typeof NodeHttp;
  const transformer = require(modules.transformer) as typeof Transformer;
  /* eslint-enable @typescript-eslint/no-require-imports */
  const parent = thread.parentPort!;
  const say =
    (level: 'warn' | 'error') =>
    (message: string, ...args: unknown[]) =>
      parent.postMessage({ diag: level, message: [message, ...args].map(String).join(' ') });
  const quiet = () => {};
  api.diag.setLogger(
    { error: say('error'), warn: say('warn'), info: quiet, debug: quiet, verbose: quiet },
    api.DiagLogLevel.WARN,
  );
  const answers =
    contentType === 'application/json' ? transformer.JsonTraceSerializer : transformer.ProtobufTraceSerializer;
  const delegate = http.createOtlpHttpExportDelegate(
    http.convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': contentType }),
    {
      serializeRequest: (batch: Batch) => batch.data,
      deserializeResponse: (data) => answers.deserializeResponse(data),
    },
    'otlp_http_span_exporter',
    { ...transformer.TraceExporterMetricsHelper, countItems: (batch: Batch) => batch.spans },
    undefined,
  );
  parent.on('message', (message: ToWorker) => {
    if ('shutdown' in message) {
      void delegate.shutdown().finally(() => parent.postMessage({ closed: true }));
      return;
    }
    delegate.export(message.batch, ({ code, error }) =>
      parent.postMessage({
        id: message.id,
        code,
        ...(error && { error: { name: error.name, message: error.message } }),
      }),
    );
  });
}
