CREATE TABLE "search_index_pending" (
	"collection" text NOT NULL,
	"id" uuid NOT NULL,
	"marked" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "search_index_pending_collection_id_pk" PRIMARY KEY("collection","id")
);
