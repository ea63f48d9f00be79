ALTER TABLE "runs" ADD COLUMN "cpu_seconds" double precision;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "gpu_seconds" double precision;--> statement-breakpoint
ALTER TABLE "stages" ADD COLUMN "usage" jsonb;