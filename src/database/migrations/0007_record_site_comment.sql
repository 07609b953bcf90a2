-- Records of a form without a site (a shared form) now take the site of the request they came
-- through (the Host's site, else the submitting user's), and a caller bound to a site sees only its
-- own site's records. Rows stored before this migration are deliberately left as they are: which
-- site a shared form's old submission came through was never stored, so guessing it (for instance
-- from the submitting user's current site) could hand a record to the wrong tenant. They keep
-- site_id NULL and are therefore visible only to admins and to callers without any site.
COMMENT ON COLUMN data_records.site_id IS 'The site the record belongs to: its form''s site, or for a form without a site the site of the request it came through (Host''s site, else the submitting user''s), else NULL. Only admins and callers of that same site see it; a NULL row is seen only by admins and callers without a site. Rows of shared forms stored before migration 0007 were left with NULL on purpose (their site was never recorded).';
--> statement-breakpoint
COMMENT ON COLUMN workflow_runs.site_id IS 'The site of the run: its form''s site, or for a form without a site the site of the request that started it (Host''s site, else the user''s), else NULL. Visible to admins and to callers of that same site only. Runs stored before migration 0007 are left as they were.';
