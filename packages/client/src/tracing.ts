/**
 * Continues the caller's trace when `@opentelemetry/api` is installed (an optional peer dependency): every attempt of
 * a request, retries included, is a CLIENT span by the stable HTTP client conventions, child of the caller's active
 * span, and its context is sent as `traceparent` / `tracestate` through the propagator the app registered. Without the
 * package, or with no SDK registered, nothing is recorded and no header is added.
 */
import type * as OtelApiModule from '@opentelemetry/api';
import { networkErrorCode } from './errors.js';

/** Types only: the module itself is loaded at run time, when installed (below). */
type OtelApi = typeof OtelApiModule;

/** One attempt's span: ended with the answer's status, or with the error that stopped it. */
export interface AttemptSpan {
  end(status: number): void;
  fail(error: unknown): void;
}

export interface AttemptTracer {
  /** Starts attempt number `resendCount + 1` and writes its trace context into `headers`. */
  start(method: string, url: string, template: string | undefined, resendCount: number, headers: Headers): AttemptSpan;
}

/** Methods the conventions name; any other is `_OTHER`, so the attribute stays bounded. */
const KNOWN_METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE']);

let loading: Promise<OtelApi | undefined> | undefined;

/**
 * The API, imported once on first use; undefined when it is not installed. A dynamic import works from both builds
 * (the CJS build turns it into a `require`), and a missing optional peer is not an error.
 */
function loadApi(): Promise<OtelApi | undefined> {
  loading ??= import('@opentelemetry/api').then(
    (api) => api,
    () => undefined,
  );
  return loading;
}

/** The tracer for a transport, or undefined without `@opentelemetry/api`. */
export async function attemptTracer(): Promise<AttemptTracer | undefined> {
  const api = await loadApi();
  return api && tracerOn(api);
}

const headerSetter = {
  set(carrier: Headers, key: string, value: string) {
    carrier.set(key, value);
  },
};

function tracerOn(api: OtelApi): AttemptTracer {
  const tracer = api.trace.getTracer('@animal-store/client');
  return {
    start(method, url, template, resendCount, headers) {
      const target = new URL(url);
      const known = KNOWN_METHODS.has(method);
      const span = tracer.startSpan(`${known ? method : 'HTTP'}${template ? ` ${template}` : ''}`, {
        kind: api.SpanKind.CLIENT,
        attributes: {
          'http.request.method': known ? method : '_OTHER',
          ...(known ? {} : { 'http.request.method_original': method }),
          'server.address': target.hostname,
          'server.port': Number(target.port) || (target.protocol === 'https:' ? 443 : 80),
          // The key travels in a header, never in the URL; a URL with credentials has them left out.
          'url.full': target.username || target.password ? withoutCredentials(target) : url,
          ...(template ? { 'url.template': template } : {}),
          ...(resendCount > 0 ? { 'http.request.resend_count': resendCount } : {}),
        },
      });
      api.propagation.inject(api.trace.setSpan(api.context.active(), span), headers, headerSetter);
      return {
        end(status) {
          span.setAttribute('http.response.status_code', status);
          if (status >= 400) {
            span.setAttribute('error.type', String(status));
            span.setStatus({ code: api.SpanStatusCode.ERROR });
          }
          span.end();
        },
        fail(error) {
          const type = networkErrorCode(error) ?? (error instanceof Error ? error.name : '_OTHER');
          span.setAttribute('error.type', type);
          span.setStatus({ code: api.SpanStatusCode.ERROR, message: type });
          span.end();
        },
      };
    },
  };
}

function withoutCredentials(url: URL): string {
  const copy = new URL(url);
  copy.username = '';
  copy.password = '';
  return copy.href;
}
