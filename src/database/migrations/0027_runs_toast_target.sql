-- A run's row (the journal: request, definition, checkpoint, steps) is about 3-5 kB. At the default
-- toast_tuple_target (about 2 kB) PostgreSQL compressed its JSON columns and moved part of them to
-- the TOAST table at the run's first write and again at its end: a tenth of the database's work per
-- run (bench/README.md, "2026-11-29, 14:21-15:17 UTC"). Rows up to a page now stay whole in the heap;
-- larger ones are still compressed and moved out as before.
ALTER TABLE "workflow_runs" SET (toast_tuple_target = 8160);
