-- 015_listing.sql: the active jobs and the finished ones, each in an index
-- of its own by id, so that nvq list reads only the active ones (not every
-- job in the history before them) and nvq history only the finished ones
-- (not the queue): each page of a listing costs its rows, whatever the rest.
CREATE INDEX jobs_active ON jobs (id) WHERE state IN ('PENDING', 'RUNNING', 'SUSPENDED');
CREATE INDEX jobs_finished ON jobs (id) WHERE state NOT IN ('PENDING', 'RUNNING', 'SUSPENDED');
