ALTER TABLE "deliveries" ADD COLUMN "payload_digest" text;--> statement-breakpoint
-- The deliveries stored before: each body's first copy gets its digest (the same expression
-- as store/deliveries/payload-digest-sql.ts), so a replay of an old body is known too; a
-- later copy of one (a replay already made) keeps none, for the index to be unique.
UPDATE "deliveries" AS "d" SET "payload_digest" = "first"."digest"
FROM (
  SELECT DISTINCT ON ("digest") "id", "digest"
  FROM (
    SELECT "id", "received_at", encode(sha256(convert_to("payload"::text, 'UTF8')), 'hex') AS "digest"
    FROM "deliveries"
  ) AS "all"
  ORDER BY "digest", "received_at", "id"
) AS "first"
WHERE "d"."id" = "first"."id";--> statement-breakpoint
CREATE UNIQUE INDEX "deliveries_payload_digest_unique" ON "deliveries" USING btree ("payload_digest");
