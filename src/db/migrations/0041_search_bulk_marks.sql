-- A bulk writer's search marks are one row per marking statement (a feed chunk's new or changed
-- products, their ids as an array), not one row per product: a row and two index entries per product
-- were 5.7 µs of an imported row's statement time. The drain (src/search/marks.ts) takes whole sets,
-- oldest first, and locks the rows it builds before it reads them, so that of two drain steps
-- building one product the later reads what the earlier committed or newer. Marks of single writes
-- (Typesense mode) stay one row per product in search_index_pending, drained at once; the bulk marks
-- waiting there now become sets of at most 5,000.
CREATE TABLE "search_bulk_marks" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
	"collection" text NOT NULL,
	"ids" uuid[] NOT NULL,
	"size" integer NOT NULL,
	"marked" timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);--> statement-breakpoint
-- random UUIDs do not compress: stored out of line without trying
ALTER TABLE "search_bulk_marks" ALTER COLUMN "ids" SET STORAGE EXTERNAL;--> statement-breakpoint
CREATE INDEX "search_bulk_marks_marked_idx" ON "search_bulk_marks" USING btree ("marked");--> statement-breakpoint
-- cut to the drain's step (5,000 ids, DRAIN_BATCH in src/search/marks.ts), oldest first as they were marked
INSERT INTO "search_bulk_marks" ("collection", "ids", "size", "marked")
	SELECT "collection", array_agg("id" ORDER BY "id"), count(*), min("marked")
	FROM (SELECT "collection", "id", "marked",
			(row_number() OVER (PARTITION BY "collection" ORDER BY "marked", "id") - 1) / 5000 AS "part"
		FROM "search_index_pending" WHERE "bulk") m
	GROUP BY "collection", "part" ORDER BY min("marked");--> statement-breakpoint
DELETE FROM "search_index_pending" WHERE "bulk";--> statement-breakpoint
DROP INDEX "search_index_pending_bulk_marked_idx";--> statement-breakpoint
ALTER TABLE "search_index_pending" DROP COLUMN "bulk";--> statement-breakpoint
CREATE INDEX "search_index_pending_marked_idx" ON "search_index_pending" USING btree ("marked");
