import { addIssueToContext, DIRTY, INVALID, z } from 'zod';

/**
 * A zod 3 `ZodEffects` (a preprocess or a refinement) that parses without leaving garbage to the old generation.
 *
 * zod's own `_parse` hands each effect a context written as an object literal with a getter (`get path()`) and a
 * closure: V8 gives every such object a hidden class of its own, made in the old generation and pointing at the
 * young closure. So each value a `z.preprocess`, `.refine` or `.superRefine` parses leaves garbage that only a
 * mark-compact frees, and keeps the parse's young objects (the request's query, the parse's context) alive through
 * the scavenges in between, which then take longer (figures: the bench's `parse` scenario, BENCHMARKS.md). Here the
 * context is a plain object with the same `addIssue` and `path`.
 *
 * The rule: this `_parse` does what zod's does for preprocess and refinement effects in a synchronous parse, step for
 * step (the same statuses, issues and values); a transform, or any asynchronous parse, is zod's own. Tests compare
 * both on valid and invalid values (`lean-effects.test.ts`).
 */
export class LeanEffects<T extends z.ZodTypeAny, Output = z.output<T>, Input = z.input<T>> extends z.ZodEffects<
  T,
  Output,
  Input
> {
  override _parse(input: z.ParseInput): z.ParseReturnType<Output> {
    const effect = this._def.effect;
    if (effect.type === 'transform' || input.parent.common.async) return super._parse(input);
    const { status, ctx } = this._processInputParams(input);
    const checkCtx: z.RefinementCtx = {
      addIssue: (issue) => {
        addIssueToContext(ctx, issue);
        if (issue.fatal) status.abort();
        else status.dirty();
      },
      path: ctx.path,
    };
    if (effect.type === 'preprocess') {
      const processed: unknown = effect.transform(ctx.data, checkCtx);
      if (status.value === 'aborted') return INVALID;
      const result: z.SyncParseReturnType<unknown> = this._def.schema._parseSync({
        data: processed,
        path: ctx.path,
        parent: ctx,
      });
      if (result.status === 'aborted') return INVALID;
      if (result.status === 'dirty' || status.value === 'dirty') return DIRTY(result.value as Output);
      return result as z.ParseReturnType<Output>;
    }
    const inner: z.SyncParseReturnType<unknown> = this._def.schema._parseSync({
      data: ctx.data as unknown,
      path: ctx.path,
      parent: ctx,
    });
    if (inner.status === 'aborted') return INVALID;
    if (inner.status === 'dirty') status.dirty();
    if ((effect.refinement(inner.value, checkCtx) as unknown) instanceof Promise) {
      throw new Error('Async refinement encountered during synchronous parse operation. Use .parseAsync instead.');
    }
    return { status: status.value, value: inner.value as Output };
  }
}

/** `schema` (a preprocess or refinement made with zod's own API) parsing as {@link LeanEffects}. */
export function lean<T extends z.ZodTypeAny, Output, Input>(
  schema: z.ZodEffects<T, Output, Input>,
): z.ZodEffects<T, Output, Input> {
  return new LeanEffects<T, Output, Input>(schema._def);
}
