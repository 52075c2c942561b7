/**
 * List pages kept in memory while the database is unchanged: at most `maxEntries`, least recently used evicted, all
 * dropped by {@link PageCache.clear} when an unknown change was committed (reads.ts reads `PRAGMA data_version`
 * before each answer), and those a known change may reach dropped by {@link PageCache.drop}.
 *
 * A page is kept only when it is asked for a second time while its first asking is still remembered (the "doorkeeper"
 * of TinyLFU): under varied traffic nearly every page is asked for once, and keeping those cost more than the cache
 * saved: every kept page outlived the young generation, and evicted ones became old garbage
 * (docs/architecture.md#garbage-on-the-read-path). The doorkeeper remembers keys only, up to `maxEntries * 8` of
 * them, then starts again.
 */
export class PageCache<Page> {
  readonly #pages = new Map<string, Page>();
  readonly #asked = new Set<string>();
  hits = 0;
  misses = 0;

  constructor(private readonly maxEntries: number) {}

  /** The page under `key`, from memory when it is kept, else from `read`. */
  get(key: string, read: () => Page): Page {
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

  /** Drops every page (what changed is unknown); the keys asked for once stay remembered. */
  clear(): void {
    this.#pages.clear();
  }

  /** Drops the pages `reached` says a change reaches; the others stay valid. */
  drop(reached: (page: Page) => boolean): void {
    for (const [key, page] of this.#pages) if (reached(page)) this.#pages.delete(key);
  }
}
