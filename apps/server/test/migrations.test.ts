import { execFileSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/database.js';
import { migrationsDir, readMigrations } from '../src/db/migrations.js';
import { migratePostgres } from '../src/db/postgres/migrate.js';
import { migrateSqlite } from '../src/db/sqlite/migrate.js';
import { Prisma as PostgresPrisma } from '../src/generated/postgresql/client.js';
import { Prisma as SqlitePrisma } from '../src/generated/sqlite/client.js';
import { createTestDatabase, databaseConfig, POOLED_PROVIDERS, PROVIDERS, prismaClientFor } from './helpers.js';

/** A row as the client reads it back: `row`, and null in every field of the model it leaves out (added later). */
const withNulls = (model: string, row: object) => ({
  ...Object.fromEntries((modelFields(SqlitePrisma).find(([m]) => m === model)?.[1] ?? []).map((f) => [f, null])),
  ...row,
});

/** Every model of models.prisma with its fields, as a provider's generated client knows them. */
function modelFields(prisma: typeof SqlitePrisma | typeof PostgresPrisma): Array<[string, string[]]> {
  return Object.values(prisma.ModelName).map((model) => {
    const fields = (prisma as unknown as Record<string, Record<string, string>>)[`${model}ScalarFieldEnum`];
    return [model, Object.values(fields ?? {})];
  });
}

describe('Prisma schema and migrations', () => {
  it('the per-provider schemas are generated from the one model source (no drift)', () => {
    execFileSync(process.execPath, ['scripts/prisma-generate.mjs', '--check'], {
      cwd: join(import.meta.dirname, '..'),
    });
  });

  it.each(PROVIDERS)(
    'agree on %s: every field of every model is a column once the migrations ran',
    async (provider) => {
      const database = await createTestDatabase(provider);
      try {
        await (await openDatabase(databaseConfig(database.target))).close();
        const target = database.target;
        let columns: (table: string) => Promise<string[]>;
        let close: () => Promise<void>;
        if (target.provider === 'sqlite') {
          const raw = new BetterSqlite3(target.file);
          columns = async (table) =>
            (raw.pragma(`table_info("${table}")`) as Array<{ name: string }>).map((c) => c.name);
          close = async () => void raw.close();
        } else {
          const client = new pg.Client({ connectionString: target.url });
          await client.connect();
          columns = async (table) =>
            (
              await client.query<{ name: string }>(
                'SELECT column_name AS name FROM information_schema.columns WHERE table_name = $1',
                [table],
              )
            ).rows.map((r) => r.name);
          close = () => client.end();
        }
        try {
          for (const [model, fields] of modelFields(provider === 'sqlite' ? SqlitePrisma : PostgresPrisma)) {
            expect(fields.length, model).toBeGreaterThan(0);
            const found = await columns(model);
            expect(
              fields.filter((f) => !found.includes(f)),
              `${model}: fields of models.prisma without a column (write a migration per provider)`,
            ).toEqual([]);
          }
        } finally {
          await close();
        }
      } finally {
        await database.drop();
      }
    },
  );

  it.each(POOLED_PROVIDERS)(
    'agree on %s: every model field is written and read through the client after migrating a fresh database',
    async (provider) => {
      const database = await createTestDatabase(provider);
      try {
        const db = await openDatabase(databaseConfig(database.target));
        await db.close();
        const prisma = prismaClientFor(database.target);
        try {
          // A record the prepared writer stored (its own SQL) reads back through the client too. (First: the pets
          // below take SQLite's ids to 2^53-1, past which the service refuses to create.)
          const writer = await openDatabase(databaseConfig(database.target), { migrate: false });
          const scope = { lineageId: 7, key: 'written', fingerprint: 'f', locationPrefix: '/v1/pets/' };
          const made = await writer.pets.createOnce({ name: 'Written', categoryId: 2 }, scope);
          await writer.close();
          const written = await prisma.idempotencyRecord.findUnique({
            where: { lineageId_key: { lineageId: 7, key: 'written' } },
          });
          expect(made.kind).toBe('created');
          expect(written).toMatchObject({
            fingerprint: 'f',
            status: 201,
            body: made.kind === 'created' ? made.answer.body : '',
          });
          expect(written!.expiresAt.getTime() - written!.createdAt.getTime()).toBeGreaterThan(23.9 * 3600_000);

          const createdAt = new Date('2026-01-02T03:04:05.678Z');
          const pet = {
            id: 9007199254740991n,
            name: 'Ünïcode 🐕',
            categoryId: 9007199254740991n,
            status: 'sold',
            createdAt,
          };
          expect(await prisma.pet.create({ data: pet })).toEqual(withNulls('Pet', pet));
          expect(await prisma.pet.findUnique({ where: { id: pet.id } })).toEqual(withNulls('Pet', pet));
          const bare = await prisma.pet.create({ data: { name: 'Bare', categoryId: 1n } });
          expect(bare.status).toBeNull();
          expect(bare.createdAt).toBeInstanceOf(Date);
          if (provider === 'sqlite') {
            // The next id would be beyond 2^53-1: refused, never answered rounded, and nothing is committed.
            const full = await openDatabase(databaseConfig(database.target), { migrate: false });
            await expect(full.pets.create({ name: 'Past', categoryId: 1 })).rejects.toThrow(/beyond 2\^53-1/);
            await full.close();
            expect(await prisma.pet.count({ where: { name: 'Past' } })).toBe(0);
          }

          const key = {
            id: 7,
            prefix: 'ask_abcdefgh',
            hash: 'f'.repeat(64),
            name: 'ops',
            plan: 'enterprise',
            perMinute: 5000,
            perDay: 2_000_000,
            createdAt,
            revokedAt: new Date('2026-02-03T00:00:00.000Z'),
            scopes: 'pets:read',
            expiresAt: new Date('2027-03-04T05:06:00.000Z'),
            lastUsedAt: new Date('2026-01-02T03:05:00.000Z'),
            lastDeprecatedCallAt: new Date('2026-01-02T03:06:00.000Z'),
            lineageId: 3,
          };
          expect(await prisma.apiKey.create({ data: key })).toEqual(withNulls('ApiKey', key));
          expect(await prisma.apiKey.findUnique({ where: { hash: key.hash } })).toEqual(withNulls('ApiKey', key));
          await expect(prisma.apiKey.create({ data: { ...key, id: 8 } })).rejects.toThrow(); // hash is unique

          const record = {
            lineageId: 7,
            key: '8e03978e-40d5-43e8-bc93-6894a57f9324',
            fingerprint: 'x'.repeat(43),
            petId: 9007199254740991n,
            status: 201,
            location: '/v1/pets/9007199254740991',
            body: '{"id":9007199254740991,"name":"Ünïcode 🐕","categoryId":9007199254740991,"status":"sold"}',
            createdAt,
            expiresAt: new Date('2026-01-03T03:04:05.678Z'),
          };
          expect(await prisma.idempotencyRecord.create({ data: record })).toEqual(
            withNulls('IdempotencyRecord', record),
          );
          const where = { lineageId_key: { lineageId: 7, key: record.key } };
          expect(await prisma.idempotencyRecord.findUnique({ where })).toEqual(withNulls('IdempotencyRecord', record));
          await expect(prisma.idempotencyRecord.create({ data: record })).rejects.toThrow(); // one record per key

          // A key made before the key-lifecycle columns: both scopes, no expiry, no use, no lineage.
          const plain = await prisma.apiKey.create({
            data: { prefix: 'ask_plainkey', hash: 'e'.repeat(64), plan: 'free' },
          });
          expect(plain).toMatchObject({
            scopes: 'pets:read pets:write',
            expiresAt: null,
            lastUsedAt: null,
            lastDeprecatedCallAt: null,
            lineageId: null,
          });
        } finally {
          await prisma.$disconnect();
        }
      } finally {
        await database.drop();
      }
    },
  );
});

/** A temporary folder holding a SQLite file and a copy of the SQLite migrations, removed after `fn`. */
function withScratch(fn: (scratch: { sqlite: BetterSqlite3.Database; migrations: string }) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'migrate-'));
  const sqlite = new BetterSqlite3(join(dir, 'db.sqlite'));
  try {
    const migrations = join(dir, 'migrations');
    cpSync(migrationsDir('sqlite'), migrations, { recursive: true });
    fn({ sqlite, migrations });
  } finally {
    sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('migration runner', () => {
  it('records applied migrations as Prisma Migrate does and applies each once (SQLite)', () => {
    withScratch(({ sqlite }) => {
      const all = readMigrations(migrationsDir('sqlite'));
      expect(migrateSqlite(sqlite)).toEqual(all.map((m) => m.name));
      expect(migrateSqlite(sqlite)).toEqual([]);
      const rows = sqlite
        .prepare('SELECT migration_name, checksum, finished_at, applied_steps_count FROM _prisma_migrations')
        .all() as {
        migration_name: string;
        checksum: string;
        finished_at: number | null;
        applied_steps_count: number;
      }[];
      expect(rows.map((r) => [r.migration_name, r.checksum])).toEqual(all.map((m) => [m.name, m.checksum]));
      for (const row of rows) {
        expect(row.finished_at).not.toBeNull();
        expect(row.applied_steps_count).toBe(1);
      }
    });
  });

  it('refuses to start on a migration edited after it was applied', () => {
    withScratch(({ sqlite, migrations }) => {
      migrateSqlite(sqlite, migrations);
      const first = readdirSync(migrations)
        .filter((d) => !d.endsWith('.toml'))
        .sort()[0]!;
      appendFileSync(join(migrations, first, 'migration.sql'), '\n-- edited\n');
      expect(() => migrateSqlite(sqlite, migrations)).toThrow(/modified after it was applied/);
    });
  });

  it('rolls a failing migration back whole, leaving no record and no half-made table', () => {
    withScratch(({ sqlite, migrations }) => {
      const bad = join(migrations, '29991231000000_broken');
      mkdirSync(bad);
      writeFileSync(join(bad, 'migration.sql'), 'CREATE TABLE "Half" (id INTEGER);\nTHIS IS NOT SQL;\n');
      expect(() => migrateSqlite(sqlite, migrations)).toThrow();
      const tables = sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
      expect(tables.map((t) => t.name)).not.toContain('Half');
      expect(tables.map((t) => t.name)).not.toContain('Pet');
    });
  });

  it('lets two replicas migrate one PostgreSQL database at once (advisory lock): each migration applied once', async () => {
    const database = await createTestDatabase('postgresql');
    try {
      const url = (database.target as { url: string }).url;
      const clients = [new pg.Client({ connectionString: url }), new pg.Client({ connectionString: url })];
      await Promise.all(clients.map((c) => c.connect()));
      const results = await Promise.all(clients.map((c) => migratePostgres(c)));
      const all = readMigrations(migrationsDir('postgresql')).map((m) => m.name);
      expect(results.flat().sort()).toEqual(all.sort());
      const { rows } = await clients[0]!.query('SELECT migration_name FROM "_prisma_migrations"');
      expect(rows.map((r: { migration_name: string }) => r.migration_name).sort()).toEqual(all.sort());
      await Promise.all(clients.map((c) => c.end()));
    } finally {
      await database.drop();
    }
  });
});
