ALTER TABLE "cache_entries" ADD COLUMN "manifest_key" text;--> statement-breakpoint
ALTER TABLE "stages" ADD COLUMN "notes" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
CREATE INDEX "cache_entries_manifest_idx" ON "cache_entries" USING btree ("repository","trust_domain","manifest_key","created_at");