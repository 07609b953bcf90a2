-- A run's checkpoint as a server-side function, for the reason of migrations 0014 and 0016: sent
-- unnamed (so that PgBouncer in transaction mode works), the update was parsed and planned on every
-- checkpoint; PL/pgSQL keeps its plan per connection, through any pooler.
--
-- Commits the progress of a run this instance holds (`p_owner`, still running) and renews its
-- lease; answers the run's cancellation flag, or NULL (nothing written) when the lease was lost.
CREATE OR REPLACE FUNCTION fdws_checkpoint_run(
  p_id uuid, p_owner text, p_next_step integer, p_step_in_flight integer, p_checkpoint jsonb,
  p_steps jsonb, p_data_id uuid, p_lease interval
) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  cancel_flag boolean;
BEGIN
  UPDATE workflow_runs
  SET next_step = p_next_step, step_in_flight = p_step_in_flight, checkpoint = p_checkpoint,
    steps = p_steps, data_id = p_data_id, lease_until = now() + p_lease
  WHERE id = p_id AND lease_owner = p_owner AND status = 'running'
  RETURNING cancel_requested INTO cancel_flag;
  RETURN cancel_flag;
END
$$;
