-- API keys as a product: scopes (space-separated, every existing key keeps both), an optional expiry, the last use
-- (to the minute, written in batches), and the rotation lineage (the first key's id; NULL on a key that was never
-- rotated, which is its own lineage) that old and new keys share their rate-limit counters and bans through.
ALTER TABLE "ApiKey" ADD COLUMN "scopes" TEXT NOT NULL DEFAULT 'pets:read pets:write';
ALTER TABLE "ApiKey" ADD COLUMN "expiresAt" TIMESTAMP(3);
ALTER TABLE "ApiKey" ADD COLUMN "lastUsedAt" TIMESTAMP(3);
ALTER TABLE "ApiKey" ADD COLUMN "lineageId" INTEGER;
