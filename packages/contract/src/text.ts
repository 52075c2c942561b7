import { z } from 'zod';
import { lean } from './lean-effects.js';

/** Length in Unicode code points (what a person counts), not UTF-16 units: 255 emoji are 255 characters. */
export function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** Control characters (C0, DEL, C1: U+0000-U+001F, U+007F-U+009F): NUL cannot be stored by PostgreSQL, the rest are no part of a one-line name. */
const CONTROL = /\p{Cc}/u;
/** A lone UTF-16 surrogate (U+D800-U+DFFF outside a pair) is no Unicode text: stored, it comes back as U+FFFD. */
const LONE_SURROGATE = /\p{Cs}/u;

/** Why `text` is not a name of at most `max` characters (a phrase to follow the field's name), or undefined. */
export function nameProblem(text: string, max: number): string | undefined {
  if (text.trim().length === 0) return 'must contain at least one non-whitespace character';
  if (text.length > max && codePoints(text) > max) return `must be at most ${max} characters`;
  if (CONTROL.test(text)) return 'must not contain control characters (U+0000-U+001F, U+007F-U+009F)';
  if (LONE_SURROGATE.test(text)) return 'must be valid Unicode text (no lone surrogate)';
  return undefined;
}

/**
 * A name: one line of text that both databases store and give back as sent, for pets and API keys alike. At least one
 * character that is not whitespace, at most `max` code points, no control character, no lone surrogate. Everything
 * else is allowed (format characters, private use, noncharacters): stored as given, never trimmed.
 */
export function nameText(field: string, max: number) {
  return lean(
    z
      .string({ invalid_type_error: `${field} must be a string`, required_error: `${field} is required` })
      .superRefine((text, ctx) => {
        const problem = nameProblem(text, max);
        if (problem) ctx.addIssue({ code: z.ZodIssueCode.custom, message: `${field} ${problem}` });
      }),
  );
}

/** The OpenAPI description of {@link nameText}'s rule. */
export const nameRuleDescription = (max: number) =>
  `At most ${max} Unicode code points, at least one not whitespace; no control characters (U+0000-U+001F, U+007F-U+009F), no lone surrogates.`;
