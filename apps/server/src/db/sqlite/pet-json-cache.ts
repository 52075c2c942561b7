/**
 * The JSON of pets by id: at most `maxEntries`, in two generations. New and used entries go in the young one; when it
 * holds half, it becomes the old one and the old one is dropped, and an old entry that is used again moves back to
 * the young one. So pets that pages keep showing stay, while pets created in bulk and never shown age out (a plain
 * first-in first-out order dropped the oldest pets first, the ones every first page shows).
 */
export class PetJsonCache {
  #young = new Map<number, string>();
  #old = new Map<number, string>();
  readonly #half: number;
  constructor(maxEntries: number) {
    this.#half = Math.floor(maxEntries / 2);
  }
  get(id: number): string | undefined {
    const json = this.#young.get(id);
    if (json !== undefined) return json;
    const old = this.#old.get(id);
    if (old !== undefined) this.set(id, old);
    return old;
  }
  set(id: number, json: string): void {
    if (this.#half === 0) return;
    if (this.#young.size >= this.#half) {
      this.#old = this.#young;
      this.#young = new Map();
    }
    this.#young.set(id, json);
  }
  clear(): void {
    this.#young.clear();
    this.#old.clear();
  }
}
