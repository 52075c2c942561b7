/** A GET answer remembered with its ETag, to revalidate with `If-None-Match`. */
export interface CacheEntry {
  etag: string;
  body: unknown;
  headers: Headers;
}

/** The parts of an answer the cache reads and returns (the transport's response). */
interface Answer {
  status: number;
  body: unknown;
  headers: Headers;
}

/** The transport's GET cache: URLs to their last 200 with an ETag, least recently used first out. */
export class EtagCache {
  readonly #entries = new Map<string, CacheEntry>();

  constructor(private readonly maxEntries: number) {}

  get(url: string): CacheEntry | undefined {
    return this.#entries.get(url);
  }

  /** Remembers a 200 with an ETag; turns a 304 for a remembered URL into the remembered 200. */
  revalidated<A extends Answer>(url: string, result: A, cached: CacheEntry | undefined): A {
    if (result.status === 304 && cached) {
      const headers = new Headers(cached.headers);
      result.headers.forEach((value, name) => headers.set(name, value));
      this.#touch(url, { ...cached, etag: result.headers.get('etag') ?? cached.etag, headers });
      return { ...result, status: 200, body: structuredClone(cached.body), headers };
    }
    const etag = result.headers.get('etag');
    if (result.status === 200 && etag)
      this.#touch(url, { etag, body: structuredClone(result.body), headers: new Headers(result.headers) });
    else if (result.status !== 304) this.#entries.delete(url);
    return result;
  }

  #touch(url: string, entry: CacheEntry): void {
    this.#entries.delete(url);
    this.#entries.set(url, entry);
    while (this.#entries.size > this.maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
  }
}
