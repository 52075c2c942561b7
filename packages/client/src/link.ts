/** One link of an RFC 8288 `Link` header: its target and its parameters (names lower-cased, `rel` split into types). */
export interface WebLink {
  /** The target URI reference, as written between `<` and `>` (may be relative). */
  uri: string;
  /** Link relation types, lower-cased (`rel="next prev"` gives `['next', 'prev']`). */
  rel: string[];
  /** Every parameter by lower-cased name; the first occurrence wins, as RFC 8288 §3 says. */
  params: Record<string, string>;
}

const WHITESPACE = /[ \t]/;

/**
 * Parses a `Link` header value (RFC 8288 §3), several links separated by commas, as fetch joins repeated headers.
 * Quoted parameter values may hold commas, semicolons and backslash escapes. Malformed links are skipped.
 */
export function parseLinkHeader(value: string | null | undefined): WebLink[] {
  const links: WebLink[] = [];
  if (!value) return links;
  const scan = new LinkScanner(value);
  while (!scan.done) {
    scan.skipSpace();
    if (scan.next === ',') {
      scan.at++;
      continue;
    }
    if (scan.next !== '<') {
      scan.skipToNextLink();
      continue;
    }
    const end = value.indexOf('>', scan.at + 1);
    if (end < 0) break;
    const uri = value.slice(scan.at + 1, end).trim();
    scan.at = end + 1;
    const params = scan.params();
    const rel = (params.rel ?? '')
      .toLowerCase()
      .split(/[ \t]+/)
      .filter(Boolean);
    links.push({ uri, rel, params });
  }
  return links;
}

/** A cursor over a `Link` header value, with the steps of its grammar. */
class LinkScanner {
  /** Index of the next character to read. */
  at = 0;

  constructor(private readonly text: string) {}

  get done(): boolean {
    return this.at >= this.text.length;
  }

  get next(): string | undefined {
    return this.text[this.at];
  }

  skipSpace(): void {
    while (!this.done && WHITESPACE.test(this.text[this.at]!)) this.at++;
  }

  /** Moves past the rest of a malformed link, to just after the next top-level comma. */
  skipToNextLink(): void {
    let quoted = false;
    for (; !this.done; this.at++) {
      const ch = this.text[this.at];
      if (quoted && ch === '\\') this.at++;
      else if (ch === '"') quoted = !quoted;
      else if (ch === ',' && !quoted) {
        this.at++;
        return;
      }
    }
  }

  /** The parameters after a link's `<uri>`, up to and past the comma that ends the link (or its malformed rest). */
  params(): Record<string, string> {
    const params: Record<string, string> = {};
    for (;;) {
      this.skipSpace();
      if (this.done || this.next === ',') {
        this.at++;
        return params;
      }
      if (this.next !== ';') {
        this.skipToNextLink();
        return params;
      }
      this.at++;
      const [name, value] = this.param();
      if (name && !(name in params)) params[name] = value;
    }
  }

  /** One `name[=value]` after its `;`: the name lower-cased, the value unquoted (empty when absent). */
  private param(): [string, string] {
    this.skipSpace();
    const nameStart = this.at;
    while (!this.done && !/[=;, \t]/.test(this.text[this.at]!)) this.at++;
    const name = this.text.slice(nameStart, this.at).toLowerCase();
    this.skipSpace();
    if (this.next !== '=') return [name, ''];
    this.at++;
    this.skipSpace();
    return [name, this.text[this.at] === '"' ? this.quoted() : this.token()];
  }

  /** A quoted string from its opening quote, backslash escapes undone; the cursor ends past the closing quote. */
  private quoted(): string {
    let value = '';
    this.at++;
    while (!this.done && this.text[this.at] !== '"') {
      if (this.text[this.at] === '\\' && this.at + 1 < this.text.length) this.at++;
      value += this.text[this.at];
      this.at++;
    }
    this.at++; // closing quote
    return value;
  }

  /** A token value, up to the next `;` or `,`, trimmed. */
  private token(): string {
    const start = this.at;
    while (!this.done && !/[;,]/.test(this.text[this.at]!)) this.at++;
    return this.text.slice(start, this.at).trim();
  }
}

/** The target of the first link with relation type `rel` (case-insensitive), or undefined. */
export function findLink(value: string | null | undefined, rel: string): string | undefined {
  const wanted = rel.toLowerCase();
  return parseLinkHeader(value).find((link) => link.rel.includes(wanted))?.uri;
}
