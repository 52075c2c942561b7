import { Counter, Registry, type RegistryContentType } from 'prom-client';

/**
 * /metrics in the format the scraper asks for: OpenMetrics (with exemplars) when its Accept header prefers
 * `application/openmetrics-text`, as Prometheus does by default, otherwise the Prometheus text format 0.0.4.
 *
 * prom-client binds the format to the registry and, rendering OpenMetrics, renames each counter without its `_total`
 * (OpenMetrics names the family without it and adds it per sample). So each render sets the format, gives counters
 * back their `_total` before a Prometheus render, and renders are serialised: two scrapes at once never see each
 * other's format. exposition.test.ts fails if a prom-client upgrade changes either behaviour.
 */
export interface Exposition {
  contentType: string;
  body: string;
}

let queue: Promise<unknown> = Promise.resolve();

export function expose(registry: Registry<RegistryContentType>, accept: string | undefined): Promise<Exposition> {
  const openMetrics = prefersOpenMetrics(accept);
  const render = queue.then(async () => {
    if (openMetrics) {
      registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    } else {
      registry.setContentType(Registry.PROMETHEUS_CONTENT_TYPE);
      for (const metric of registry.getMetricsAsArray())
        if (metric instanceof Counter && !metric.name.endsWith('_total'))
          (metric as { name: string }).name = `${metric.name}_total`;
    }
    return { contentType: registry.contentType, body: await registry.metrics() };
  });
  queue = render.catch(() => undefined);
  return render;
}

/** True when the Accept header gives OpenMetrics a quality above zero and at least that of the text format. */
export function prefersOpenMetrics(accept: string | undefined): boolean {
  if (!accept) return false;
  let openMetrics = 0;
  let text = 0;
  for (const entry of accept.split(',')) {
    const [type = '', ...params] = entry.split(';').map((part) => part.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    const quality = q ? Number(q.slice(2)) || 0 : 1;
    if (type === 'application/openmetrics-text') openMetrics = Math.max(openMetrics, quality);
    else if (type === 'text/plain') text = Math.max(text, quality);
  }
  return openMetrics > 0 && openMetrics >= text;
}
