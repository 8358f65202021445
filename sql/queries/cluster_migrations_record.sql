-- cluster_migrations_record: mark one sql/cluster file applied.
INSERT INTO cluster_migrations (version, name)
SELECT {version:UInt32}, {name:String}
