ALTER TABLE "runs" ADD COLUMN "dirty_reasons" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "stages" ADD COLUMN "dirty_reasons" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "stages" ADD COLUMN "warnings" jsonb DEFAULT '[]'::jsonb NOT NULL;