-- migrations_record: mark one migration applied.
INSERT INTO schema_migrations (version, name)
SELECT {version:UInt32}, {name:String}
