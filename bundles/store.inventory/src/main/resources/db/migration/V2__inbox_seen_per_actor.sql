-- replay records per sender: keyed by activity id alone, any signed peer could record another actor's next id first and
-- have the real activity ignored as a replay. Rows from before carry no sender (''), so they shadow nobody; a captured
-- request can be replayed only within the 5-minute Date window anyway. The default stays so that an instance still on
-- the previous bundle (scale-out, one database) keeps recording instead of failing until it is updated.
ALTER TABLE ap_inv_inbox_seen ADD COLUMN actor text NOT NULL DEFAULT '';
ALTER TABLE ap_inv_inbox_seen DROP CONSTRAINT ap_inv_inbox_seen_pkey;
ALTER TABLE ap_inv_inbox_seen ADD PRIMARY KEY (actor, activity_id);
