ALTER TABLE "runs" ADD COLUMN "baseline_merge_base" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "baseline_lookup_failures" integer DEFAULT 0 NOT NULL;