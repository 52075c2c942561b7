/** Control characters (C0, DEL, C1) and lone surrogates: what must never reach an operator's terminal raw. */
const UNPRINTABLE = /[\p{Cc}\p{Cs}]/gu;

const escaped = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * Text stored before the name rule existed may hold escape sequences (ESC, C1 CSI): the CLI prints them as `\u001b`,
 * so a key name cannot rewrite the operator's terminal.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, escaped);
}

/** JSON for the terminal: JSON.stringify escapes C0 controls and lone surrogates but leaves DEL and C1 raw. */
export function printableJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(/[\u007f-\u009f]/g, escaped);
}
