/**
 * The reference the speed target is calibrated on: a hand-written Express + better-sqlite3 server with a key check and
 * nothing else (no contract validation, no limiter, no request ids, logs or metrics). It answers GET /v1/pets (limit
 * 20) from the same SQLite file as the real server, with the same page bytes. DATABASE_FILE names the file.
 */
import { createHash } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import express from 'express';

const db = new BetterSqlite3(process.env['DATABASE_FILE'] ?? '', { readonly: true, fileMustExist: true });
const page = db
  .prepare<[number], { id: bigint; name: string; categoryId: bigint; status: string | null }>(
    'SELECT "id", "name", "categoryId", "status" FROM "Pet" ORDER BY "id" ASC LIMIT ?',
  )
  .safeIntegers(true);
const keyByHash = db.prepare<[string], { id: number; revokedAt: unknown }>(
  'SELECT "id", "revokedAt" FROM "ApiKey" WHERE "hash" = ?',
);
const keys = new Map<string, boolean>();

const app = express();
app.get('/v1/pets', (req, res) => {
  const raw = /^Bearer (\S+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
  const hash = createHash('sha256').update(raw).digest('hex');
  let ok = keys.get(hash);
  if (ok === undefined) {
    const row = keyByHash.get(hash);
    ok = row !== undefined && row.revokedAt == null;
    keys.set(hash, ok);
  }
  if (!ok) {
    res.status(401).json({ code: 'unauthorized', message: 'Invalid API key', status: 401 });
    return;
  }
  res.json(
    page.all(20).map((r) => ({
      id: Number(r.id),
      name: r.name,
      categoryId: Number(r.categoryId),
      ...(r.status !== null ? { status: r.status } : {}),
    })),
  );
});
app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});
const server = app.listen(Number(process.env['PORT'] ?? 0), '127.0.0.1');
server.keepAliveTimeout = 65_000;
process.once('SIGTERM', () => server.close(() => process.exit(0)));
