/**
 * List pages kept in memory while the database is unchanged: at most `maxEntries`, least recently used evicted, all
 * dropped when the version read before each answer moves (see sqlite-reads.ts for what the version is), and those a
 * known change may reach dropped by {@link PageCache.drop}.
 *
 * A page is kept only when it is asked for a second time while its first asking is still remembered (the "doorkeeper"
 * of TinyLFU): under varied traffic nearly every page is asked for once, and keeping those cost more than the cache
 * saved (every kept page outlived the young generation, and evicted ones became old garbage: BENCHMARKS.md, fifth
 * session). The doorkeeper remembers keys only, up to `maxEntries * 8` of them, then starts again.
 */
export class PageCache<Page> {
  readonly #pages = new Map<string, Page>();
  readonly #asked = new Set<string>();
  #version: number | undefined;
  hits = 0;
  misses = 0;

  constructor(private readonly maxEntries: number) {}

  /** The page under `key` at database `version`, from memory when it was read at that version, else from `read`. */
  get(key: string, version: number, read: () => Page): Page {
    if (version !== this.#version) {
      this.#pages.clear();
      this.#version = version;
    }
    let page = this.#pages.get(key);
    if (page !== undefined) {
      this.hits++;
      this.#pages.delete(key); // most recently used last
      this.#pages.set(key, page);
      return page;
    }
    this.misses++;
    page = read();
    if (!this.#asked.has(key)) {
      if (this.#asked.size >= this.maxEntries * 8) this.#asked.clear();
      this.#asked.add(key);
      return page;
    }
    if (this.#pages.size >= this.maxEntries) this.#pages.delete(this.#pages.keys().next().value!);
    this.#pages.set(key, page);
    return page;
  }

  /** Drops the pages `reached` says a change reaches; the others stay valid at the current version. */
  drop(reached: (page: Page) => boolean): void {
    for (const [key, page] of this.#pages) if (reached(page)) this.#pages.delete(key);
  }
}
