-- A rotation lineage behaves as one key (#24).
-- 1. "rotatedAt": when a key was rotated out (its successor made); NULL on the lineage's current key. Only the current
--    key can be rotated or changed; a key rotated out keeps its overlap end, which nothing can move. Keys rotated before
--    this migration get their successor's creation time.
ALTER TABLE "ApiKey" ADD COLUMN "rotatedAt" TIMESTAMP(3);
UPDATE "ApiKey" AS k SET "rotatedAt" = (
  SELECT MIN(s."createdAt") FROM "ApiKey" AS s
  WHERE COALESCE(s."lineageId", s."id") = COALESCE(k."lineageId", k."id") AND s."id" > k."id"
)
WHERE EXISTS (
  SELECT 1 FROM "ApiKey" AS s WHERE COALESCE(s."lineageId", s."id") = COALESCE(k."lineageId", k."id") AND s."id" > k."id"
);

-- 2. Idempotency records are scoped to the lineage, not to one key of it: a client that switches to its rotated key
--    in the middle of a retry gets the first answer, not a second pet. Records of two keys of one lineage under the
--    same Idempotency-Key (the duplicate this prevents) keep the earliest.
DELETE FROM "IdempotencyRecord" AS r
USING "ApiKey" AS k, "IdempotencyRecord" AS o, "ApiKey" AS ok
WHERE k."id" = r."apiKeyId" AND ok."id" = o."apiKeyId" AND o."key" = r."key"
  AND COALESCE(ok."lineageId", ok."id") = COALESCE(k."lineageId", k."id")
  AND (o."createdAt", o."apiKeyId") < (r."createdAt", r."apiKeyId");
UPDATE "IdempotencyRecord" AS r SET "apiKeyId" = k."lineageId"
FROM "ApiKey" AS k WHERE k."id" = r."apiKeyId" AND k."lineageId" IS NOT NULL;
ALTER TABLE "IdempotencyRecord" RENAME COLUMN "apiKeyId" TO "lineageId";
