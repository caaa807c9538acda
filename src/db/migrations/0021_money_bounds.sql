-- reserved for a change of this release; no statement yet
SELECT 1;
