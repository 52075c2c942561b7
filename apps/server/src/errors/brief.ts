/** An error in a few log fields, without its stack: its code, and its message's last line (Prisma's message ends with the cause). */
export function briefly(err: unknown): { code?: string; err: string } {
  const message = err instanceof Error ? err.message : String(err);
  const lines = message
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const code = (err as { code?: unknown } | null)?.code;
  return { ...(typeof code === 'string' && { code }), err: (lines.at(-1) ?? '').slice(0, 200) };
}
