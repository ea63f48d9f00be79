ALTER TABLE "runs" ADD COLUMN "baseline_commits" jsonb;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "baseline_run_id" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "baseline_fixed" boolean DEFAULT false NOT NULL;