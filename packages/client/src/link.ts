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
  let i = 0;
  const n = value.length;
  const skipSpace = () => {
    while (i < n && WHITESPACE.test(value[i]!)) i++;
  };
  /** Moves past the rest of a malformed link, to just after the next top-level comma. */
  const skipToNextLink = () => {
    let quoted = false;
    for (; i < n; i++) {
      const ch = value[i];
      if (quoted && ch === '\\') i++;
      else if (ch === '"') quoted = !quoted;
      else if (ch === ',' && !quoted) {
        i++;
        return;
      }
    }
  };

  while (i < n) {
    skipSpace();
    if (value[i] === ',') {
      i++;
      continue;
    }
    if (value[i] !== '<') {
      skipToNextLink();
      continue;
    }
    const end = value.indexOf('>', i + 1);
    if (end < 0) break;
    const uri = value.slice(i + 1, end).trim();
    i = end + 1;
    const params: Record<string, string> = {};
    for (;;) {
      skipSpace();
      if (i >= n || value[i] === ',') {
        i++;
        break;
      }
      if (value[i] !== ';') {
        skipToNextLink();
        break;
      }
      i++;
      skipSpace();
      const nameStart = i;
      while (i < n && !/[=;, \t]/.test(value[i]!)) i++;
      const name = value.slice(nameStart, i).toLowerCase();
      skipSpace();
      let paramValue = '';
      if (value[i] === '=') {
        i++;
        skipSpace();
        if (value[i] === '"') {
          i++;
          while (i < n && value[i] !== '"') {
            if (value[i] === '\\' && i + 1 < n) i++;
            paramValue += value[i];
            i++;
          }
          i++; // closing quote
        } else {
          const valueStart = i;
          while (i < n && !/[;,]/.test(value[i]!)) i++;
          paramValue = value.slice(valueStart, i).trim();
        }
      }
      if (name && !(name in params)) params[name] = paramValue;
    }
    const rel = (params.rel ?? '')
      .toLowerCase()
      .split(/[ \t]+/)
      .filter(Boolean);
    links.push({ uri, rel, params });
  }
  return links;
}

/** The target of the first link with relation type `rel` (case-insensitive), or undefined. */
export function findLink(value: string | null | undefined, rel: string): string | undefined {
  const wanted = rel.toLowerCase();
  return parseLinkHeader(value).find((link) => link.rel.includes(wanted))?.uri;
}
