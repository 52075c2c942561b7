/**
 * The OTLP/HTTP protobuf span exporter: the official exporter's transport (endpoint, headers, timeout, compression,
 * retries, all from the standard OTEL_EXPORTER_OTLP_* variables, as @opentelemetry/exporter-trace-otlp-proto builds
 * it) with the request encoded by otlp-proto.ts, the same bytes at a fraction of the CPU.
 */
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import {
  type IExportTraceServiceResponse,
  type ISerializer,
  ProtobufTraceSerializer,
  TraceExporterMetricsHelper,
} from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { encodeSpans } from './otlp-proto.js';

const serializer: ISerializer<ReadableSpan[], IExportTraceServiceResponse> = {
  serializeRequest: encodeSpans,
  deserializeResponse: (data) => ProtobufTraceSerializer.deserializeResponse(data),
};

export class ProtobufSpanExporter extends OTLPExporterBase<ReadableSpan[]> implements SpanExporter {
  constructor() {
    super(
      createOtlpHttpExportDelegate(
        convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' }),
        serializer,
        'otlp_http_span_exporter',
        TraceExporterMetricsHelper,
        undefined,
      ),
    );
  }
}
