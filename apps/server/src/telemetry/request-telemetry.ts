import { adminContract, contract } from '@animal-store/contract';
import {
  type Attributes,
  context,
  type Context,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import type { Request, Response } from 'express';
import type { Metrics } from './metrics.js';
import { addAttributes, requestSampling } from './spans.js';

/**
 * The telemetry of one request: the request-duration and per-operation metrics when it finishes, and, with tracing
 * on, one SERVER span by the stable HTTP conventions, continuing an incoming W3C `traceparent`/`tracestate`. A manual
 * span here, rather than the http/express auto-instrumentation, because the server builds its own request and response
 * objects and pre-serialised bodies (http/ fast paths) that the patches would miss or slow down; here it is one object
 * per sampled request and exact attributes. The sampler decides first (spans.ts RequestSampling): an unsampled request
 * keeps only its trace id, for its log line. Never recorded: headers (Authorization), the query, bodies.
 */

/** Methods the conventions name; any other is `_OTHER`, so labels and attributes stay bounded. */
const KNOWN_METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE']);
const methodOf = (method: string) => (KNOWN_METHODS.has(method) ? method : '_OTHER');

/** Contract operation by method and route pattern (`GET /v1/pets` -> listPets), for the per-operation metric. */
const OPERATIONS = new Map<string, string>(
  [...Object.entries(contract), ...Object.entries(adminContract)].map(([name, route]) => [
    `${route.method} ${route.path}`,
    name,
  ]),
);
const API_PATH = /^\/(v1|admin\/v1)(\/|$)/;

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express's own way to extend its request and response
  namespace Express {
    interface Request {
      /**
       * With tracing on, the request's trace: its SERVER span when sampled, else the id of the trace it continues or
       * began (one property either way, set on every request). Its ids go on the log line.
       */
      trace?: Span | string;
    }
    interface Response {
      /** Why a 5xx answer failed (a dependency-failure reason): the `error.type` of its metric and span. */
      errorType?: string;
    }
  }
}

/**
 * Begins the request's trace (tracing on) and runs the rest of the chain in its span's context when it is sampled. The
 * configured sampler decides on the incoming parent (extracted only when the request carries one) and the trace id
 * alone, as the SDK would at the span's start; only a sampled request gets a span, its attributes and a context.
 */
export function beginRequest(req: Request, metrics: Metrics, next: () => void): void {
  const method = methodOf(req.method);
  metrics.activeRequests.inc({ http_request_method: method });
  const sampling = requestSampling();
  if (!sampling) return next();
  const parent = parentOf(req, sampling.root);
  const traceId = (parent === sampling.root ? undefined : trace.getSpanContext(parent)?.traceId) ?? sampling.traceId();
  const name = method === '_OTHER' ? 'HTTP' : req.method;
  if (!sampling.sampled(parent, traceId, name)) {
    req.trace = traceId;
    return next();
  }
  const span = sampling.start(
    name,
    { kind: SpanKind.SERVER, attributes: requestAttributes(req, method) },
    parent,
    traceId,
  );
  req.trace = span;
  // The body parser (raw-body) runs what follows a body in the context it was called in, however late the body comes.
  context.with(trace.setSpan(parent, span), next);
}

/** The incoming W3C trace context and baggage (the configured propagators) read into `root`; `root` when none. */
function parentOf(req: Request, root: Context): Context {
  const { headers } = req;
  return headers.traceparent === undefined && headers.baggage === undefined ? root : propagation.extract(root, headers);
}

/** The HTTP conventions' attributes of a request (never a header but the user agent), in one object. */
function requestAttributes(req: Request, method: string): Attributes {
  const host = req.headers.host ?? '';
  const colon = host.lastIndexOf(':');
  const port = colon > 0 && !host.endsWith(']');
  const attributes: Attributes = {
    'http.request.method': method,
    'url.path': req.path,
    'url.scheme': req.protocol,
    'server.address': port ? host.slice(0, colon) : host,
    // Express's req.ip (TRUST_PROXY's rules) reads X-Forwarded-For; without that header it is the socket's address.
    'client.address': (req.headers['x-forwarded-for'] === undefined ? req.socket.remoteAddress : req.ip) ?? '',
    'network.protocol.version': req.httpVersion,
  };
  if (port) attributes['server.port'] = Number(host.slice(colon + 1));
  const agent = req.headers['user-agent'];
  if (agent) attributes['user_agent.original'] = agent;
  return attributes;
}

/** The route pattern of a matched request (`/v1/pets/:petId`), undefined when no route matched. */
export function routeOf(req: Request): string | undefined {
  return req.route ? `${req.baseUrl}${String((req.route as { path: unknown }).path)}` : undefined;
}

/** Records a request that is over (answered or abandoned): metrics (with the trace as exemplar when sampled) and the end of its span. */
export function endRequest(req: Request, res: Response, metrics: Metrics, seconds: number): void {
  const method = methodOf(req.method);
  // A client that went away before the answer: no status was sent (the conventions then leave it out).
  const status = res.writableFinished ? res.statusCode : undefined;
  const route = routeOf(req);
  const errorType = status === undefined ? 'aborted' : status >= 500 ? (res.errorType ?? String(status)) : undefined;
  metrics.activeRequests.dec({ http_request_method: method });
  const labels = {
    http_request_method: method,
    ...(status !== undefined && { http_response_status_code: status }),
    ...(route !== undefined && { http_route: route }),
    ...(errorType !== undefined && { error_type: errorType }),
  };
  const span = typeof req.trace === 'object' ? req.trace : undefined;
  metrics.requestDuration.observe(
    span ? { labels, value: seconds, exemplarLabels: exemplarOf(span) as never } : { labels, value: seconds },
  );
  if (API_PATH.test(req.originalUrl)) {
    metrics.operationDuration.observe(
      {
        operation: (route && OPERATIONS.get(`${req.method} ${route}`)) ?? 'other',
        plan: req.apiKey?.plan ?? 'none',
        outcome: status === undefined ? 'aborted' : outcomeOf(status),
      },
      seconds,
    );
  }
  if (!span) return;
  const attributes: Attributes = {};
  if (status !== undefined) attributes['http.response.status_code'] = status;
  if (route !== undefined) attributes['http.route'] = route;
  if (errorType !== undefined) attributes['error.type'] = errorType;
  addAttributes(span, attributes);
  if (route !== undefined) span.updateName(`${method === '_OTHER' ? 'HTTP' : method} ${route}`);
  if (errorType !== undefined) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/**
 * The log line's trace fields, absent with tracing off: the sampled request's span ids, or an unsampled one's trace id
 * and a span id of its own (made only for a line that is logged).
 */
export function traceFields(req: Request): { trace_id: string; span_id: string } | undefined {
  const { trace: traced } = req;
  if (traced === undefined) return undefined;
  if (typeof traced === 'string') return { trace_id: traced, span_id: requestSampling()?.spanId() ?? '' };
  const { traceId, spanId } = traced.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

function exemplarOf(span: Span): { trace_id: string; span_id: string } {
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

function outcomeOf(status: number): string {
  if (status < 400) return 'success';
  if (status === 429) return 'throttled';
  if (status === 503) return 'unavailable';
  return status >= 500 ? 'error' : 'client_error';
}
