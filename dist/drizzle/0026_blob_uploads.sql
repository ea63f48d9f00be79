CREATE TABLE "blob_uploads" (
	"digest" text NOT NULL,
	"run_id" text NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "blob_uploads_pkey" PRIMARY KEY("digest","run_id")
);
