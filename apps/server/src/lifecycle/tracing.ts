import type { Config } from '../config/load.js';
import type { Logger } from '../logger.js';
import { SERVICE } from '../telemetry/service.js';
import { useTracer } from '../telemetry/spans.js';

export interface Tracing {
  /** Exports the spans still queued and unregisters the SDK. */
  shutdown(): Promise<void>;
}

/**
 * Starts OpenTelemetry tracing when an OTLP endpoint is configured. The SDK's module is imported only then: with
 * tracing off nothing of it is loaded, and the server's span helpers stay a single check.
 */
export async function startTracing(config: Pick<Config, 'tracing'>, logger: Logger): Promise<Tracing | undefined> {
  const { tracing } = config;
  if (!tracing.enabled) return undefined;
  const sdk = await import('../telemetry/sdk.js');
  const runtime = await sdk.startTracing(tracing, SERVICE, logger);
  useTracer(runtime.tracer, runtime.sampling);
  logger.info({ protocol: tracing.protocol, sampler: tracing.sampler }, 'tracing: spans exported over OTLP');
  return {
    async shutdown() {
      useTracer(undefined);
      await runtime.shutdown();
    },
  };
}
