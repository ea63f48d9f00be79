CREATE TABLE "api_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"repositories" text[] NOT NULL,
	"scope" text NOT NULL,
	"token_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_tokens_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "applied_events" (
	"run_id" text NOT NULL,
	"attempt" integer NOT NULL,
	"seq" integer NOT NULL,
	CONSTRAINT "applied_events_pkey" PRIMARY KEY("run_id","attempt","seq")
);
--> statement-breakpoint
CREATE TABLE "blob_refs" (
	"repository" text NOT NULL,
	"digest" text NOT NULL,
	"size" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "blob_refs_pkey" PRIMARY KEY("repository","digest")
);
--> statement-breakpoint
CREATE TABLE "log_lines" (
	"run_id" text NOT NULL,
	"attempt" integer NOT NULL,
	"stage" text NOT NULL,
	"seq" integer NOT NULL,
	"lines" text[] NOT NULL,
	CONSTRAINT "log_lines_pkey" PRIMARY KEY("run_id","stage","attempt","seq")
);
--> statement-breakpoint
CREATE TABLE "runners" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"owner" text NOT NULL,
	"repositories" text[] DEFAULT '{}'::text[] NOT NULL,
	"labels" text[] DEFAULT '{}'::text[] NOT NULL,
	"token_hash" text NOT NULL,
	"accepts_forks" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone,
	CONSTRAINT "runners_name_unique" UNIQUE("name"),
	CONSTRAINT "runners_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
DROP INDEX "runs_status_idx";--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "clone_url" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "fetch_ref" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "fork" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "retries" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "lease_expirations" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "timeout_ms" integer DEFAULT 86400000 NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "queued_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "lease_id" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "lease_expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "claimed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "runner_name" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "cancel_requested" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "cancel_reason" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "cancel_as" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "submitted_by" text;--> statement-breakpoint
ALTER TABLE "applied_events" ADD CONSTRAINT "applied_events_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "log_lines" ADD CONSTRAINT "log_lines_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "api_tokens_live_name_unique" ON "api_tokens" USING btree ("name") WHERE revoked_at is null;--> statement-breakpoint
CREATE INDEX "runs_status_created_at_id_idx" ON "runs" USING btree ("status","created_at","id");