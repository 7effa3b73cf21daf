-- The journal as its readers see it (shared/src/store/steps.rs): one row per step, ordered by
-- `seq`, whether the step was written as a row of its own or as one of the calls a model turn's
-- row carries (`quick_action_steps.calls`, its nth call at position `seq + n`, see
-- migrations/20261130000005_turn_rows.sql). Every reader of the journal reads this view, so how
-- steps are stored is known here and to the writers' `rows_json` only. A call's tokens and cost
-- are a turn's, never its own: 0; a call that gives no attempt was the turn's.
--
-- (A view depends on the columns it reads: a migration that changes one of them drops the view
-- first, and the functions, applied after the migrations, make it again.)
CREATE OR REPLACE VIEW quick_action_journal AS
SELECT s.task_id, s.seq, s.kind, s.name, s.tool_call_id, s.arguments, s.result, s.ok, s.error,
       s.input_tokens, s.output_tokens, s.cached_tokens, s.cost_nanos, s.latency_ms, s.started_at,
       s.finished_at, s.attempt
FROM quick_action_steps s
UNION ALL
SELECT s.task_id, s.seq + c.n::int, 'tool_call', r.name, r.tool_call_id, r.arguments, r.result, r.ok, r.error,
       0, 0, 0, 0::int8, r.latency_ms, r.started_at, r.finished_at, coalesce(r.attempt, s.attempt)
FROM quick_action_steps s
CROSS JOIN LATERAL jsonb_array_elements(s.calls) WITH ORDINALITY AS c(call, n)
CROSS JOIN LATERAL jsonb_populate_record(NULL::quick_action_steps, c.call) AS r
WHERE s.calls IS NOT NULL;
