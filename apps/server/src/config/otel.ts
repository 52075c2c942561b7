import { z } from 'zod';

/**
 * The standard OpenTelemetry variables that decide whether and how tracing starts, validated with the rest of the
 * configuration (env.ts includes them, load.ts reads them), so a typo stops the start instead of silently tracing
 * everything or nothing.
 * The SDK's own packages read the remaining standard variables themselves (OTEL_SERVICE_NAME,
 * OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS / _TIMEOUT / _COMPRESSION / _ENDPOINT): that is the spec's
 * contract, not our code reading the environment.
 */

const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
const PROTOCOLS = ['http/protobuf', 'http/json'] as const;
const PROPAGATORS = ['tracecontext', 'baggage', 'none'] as const;

export type OtlpProtocol = (typeof PROTOCOLS)[number];
export type Propagator = Exclude<(typeof PROPAGATORS)[number], 'none'>;

export interface SamplerConfig {
  root: 'always_on' | 'always_off' | 'traceidratio';
  /** Follow the incoming parent's sampled flag (the parentbased_* samplers). */
  parentBased: boolean;
  /** For traceidratio: the share of traces kept, 0..1. */
  ratio: number;
}

export type TracingConfig =
  | { enabled: false }
  | {
      enabled: true;
      protocol: OtlpProtocol;
      sampler: SamplerConfig;
      propagators: Propagator[];
      /** Batch span processor (OTEL_BSP_*): the SDK's defaults unless set. */
      batch: {
        scheduledDelayMillis: number;
        exportTimeoutMillis: number;
        maxQueueSize: number;
        maxExportBatchSize: number;
      };
    };

const ms = (name: string, fallback: number) =>
  z
    .string()
    .regex(/^[0-9]+$/, `${name} must be a whole number of milliseconds`)
    .transform(Number)
    .default(String(fallback));

const url = (name: string) =>
  z
    .string()
    .refine((value) => /^https?:\/\/[^/]/.test(value) && URL.canParse(value), `${name} must be an http(s) URL`)
    .optional();

const oneOf = <T extends string>(name: string, values: readonly [T, ...T[]]) =>
  z.enum(values, { errorMap: () => ({ message: `${name} must be one of ${values.join(', ')}` }) });

/** The OTEL_* variables of the environment schema (env.ts), each with its rule and default. */
export const OTEL_VARIABLES = {
  OTEL_SDK_DISABLED: z.enum(['true', 'false', 'TRUE', 'FALSE']).optional(),
  OTEL_TRACES_EXPORTER: oneOf('OTEL_TRACES_EXPORTER', ['otlp', 'none']).optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: url('OTEL_EXPORTER_OTLP_ENDPOINT'),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'),
  OTEL_EXPORTER_OTLP_PROTOCOL: oneOf('OTEL_EXPORTER_OTLP_PROTOCOL', PROTOCOLS).optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: oneOf('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', PROTOCOLS).optional(),
  OTEL_TRACES_SAMPLER: oneOf('OTEL_TRACES_SAMPLER', SAMPLERS).default('parentbased_always_on'),
  OTEL_TRACES_SAMPLER_ARG: z
    .string()
    .refine((value) => /^\s*[0-9.]+\s*$/.test(value) && Number(value) >= 0 && Number(value) <= 1, {
      message: 'OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 (the share of traces kept)',
    })
    .transform(Number)
    .optional(),
  OTEL_PROPAGATORS: z
    .string()
    .transform((value, ctx) => {
      const names = value.split(',').map((name) => name.trim());
      const unknown = names.filter((name) => !(PROPAGATORS as readonly string[]).includes(name));
      if (unknown.length > 0)
        ctx.addIssue({ code: 'custom', message: `OTEL_PROPAGATORS: only ${PROPAGATORS.join(', ')} are supported` });
      return names.filter((name): name is Propagator => name !== 'none');
    })
    .default('tracecontext,baggage'),
  OTEL_BSP_SCHEDULE_DELAY: ms('OTEL_BSP_SCHEDULE_DELAY', 5000),
  OTEL_BSP_EXPORT_TIMEOUT: ms('OTEL_BSP_EXPORT_TIMEOUT', 30_000),
  OTEL_BSP_MAX_QUEUE_SIZE: ms('OTEL_BSP_MAX_QUEUE_SIZE', 2048),
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: ms('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512),
};

export const OtelEnvSchema = z.object(OTEL_VARIABLES);
export type OtelEnv = z.infer<typeof OtelEnvSchema>;

/** Tracing is on only when an OTLP endpoint is set and nothing turns it off; off, the SDK is not even loaded. */
export function tracingConfig(env: OtelEnv): TracingConfig {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint || env.OTEL_SDK_DISABLED?.toLowerCase() === 'true' || env.OTEL_TRACES_EXPORTER === 'none')
    return { enabled: false };
  const parentBased = env.OTEL_TRACES_SAMPLER.startsWith('parentbased_');
  const root = env.OTEL_TRACES_SAMPLER.replace('parentbased_', '') as SamplerConfig['root'];
  const ratio = env.OTEL_TRACES_SAMPLER_ARG ?? 1;
  return {
    enabled: true,
    protocol: env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
    sampler: { root, parentBased, ratio },
    propagators: env.OTEL_PROPAGATORS,
    batch: {
      scheduledDelayMillis: env.OTEL_BSP_SCHEDULE_DELAY,
      exportTimeoutMillis: env.OTEL_BSP_EXPORT_TIMEOUT,
      maxQueueSize: env.OTEL_BSP_MAX_QUEUE_SIZE,
      maxExportBatchSize: env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
    },
  };
}
