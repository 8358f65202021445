-- revalidate_add: a chunk of changed verdicts, as TSV rows of partition,
-- seq, idx, verdict and rule-set version ({rows:String}).
INSERT INTO revalidate_changes
SELECT partition, seq, idx, verdict, rules
FROM format(TSV, 'partition UInt16, seq UInt64, idx UInt32, verdict String, rules String', {rows:String})
