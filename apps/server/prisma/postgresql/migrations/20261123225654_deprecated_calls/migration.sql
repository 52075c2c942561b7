-- When each key last called a deprecated operation (to the minute, written in batches like lastUsedAt), so operators
-- can tell who still has to move before the operation's Sunset. NULL: never.
ALTER TABLE "ApiKey" ADD COLUMN "lastDeprecatedCallAt" TIMESTAMP(3);
