-- Requests of a key (its rotation lineage) allowed in flight at once, for enterprise keys that set their own; NULL: the
-- plan's number (enterprise: the business plan's).
ALTER TABLE "ApiKey" ADD COLUMN "concurrentRequests" INTEGER;
