ALTER TABLE "blob_refs" ADD COLUMN "confirmed_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "blob_refs" ADD COLUMN "confirmed_by" text;